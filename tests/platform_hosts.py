"""Run an FMU's binary of each platform on this Linux x86-64 machine through the test host ``fmi_host/host.c``.

The host is compiled per platform with the same flags as the FMU binaries: natively for Linux x86-64, with
``x86_64-w64-mingw32-gcc`` for Windows x64 (run under wine, in a wine prefix of its own: ``NHBRIDGE_WINEPREFIX``
or ``~/.cache/nhbridge/wine-prefix``, created on first use) and with ``aarch64-linux-gnu-gcc`` for Linux aarch64
(run under ``qemu-aarch64`` with the cross libc's sysroot).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HOST_SOURCE = Path(__file__).resolve().parent / "fmi_host" / "host.c"
INCLUDE = Path(__file__).resolve().parent.parent / "fmu" / "include"
AARCH64_SYSROOT = "/usr/aarch64-linux-gnu"
WARNINGS = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"]
#: the Debian packages each platform's tests need (compiler, runner)
PACKAGES = {"linux64": ("gcc",), "win64": ("gcc-mingw-w64-x86-64", "wine", "wine64"),
            "aarch64-linux": ("gcc-aarch64-linux-gnu", "libc6-dev-arm64-cross", "qemu-user")}
COMPILERS = {"linux64": "gcc", "win64": "x86_64-w64-mingw32-gcc", "aarch64-linux": "aarch64-linux-gnu-gcc"}


def _first(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name) or (name if os.path.isabs(name) and os.access(name, os.X_OK) else None)
        if found:
            return found
    return None


def wine() -> str | None:
    return _first("wine64", "wine", "/usr/lib/wine/wine64")


def wineserver() -> str | None:
    return _first("wineserver", "/usr/lib/wine/wineserver64", "/usr/lib/wine/wineserver")


def missing(platform: str) -> str:
    """Why ``platform``'s binaries cannot be run here (the Debian packages to install), or empty."""
    tools = [COMPILERS[platform]]
    runner_ok = True
    if platform == "win64":
        runner_ok = wine() is not None
    elif platform == "aarch64-linux":
        tools.append("qemu-aarch64")
        runner_ok = os.path.isdir(os.path.join(AARCH64_SYSROOT, "lib"))
    if all(shutil.which(t) for t in tools) and runner_ok:
        return ""
    return (f"running {platform} binaries needs {', '.join(tools)}" + (" and wine" if platform == "win64" else "")
            + f" (Debian/Ubuntu: apt-get install {' '.join(PACKAGES[platform])}; scripts/test.sh installs them)")


def wine_environment() -> dict[str, str]:
    prefix = os.environ.get("NHBRIDGE_WINEPREFIX") or str(Path.home() / ".cache" / "nhbridge" / "wine-prefix")
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "WINEDEBUG": "-all", "WINEPREFIX": prefix, "WINEDLLOVERRIDES": "mscoree,mshtml="}


def start_wineserver() -> None:
    """Start the wineserver of the tests' prefix, staying up until 30 s after its last wine process (or until
    ``stop_wineserver``): a module that is killed leaves no server behind for longer.

    Without it the server ends three seconds after its last wine process, and the next run pays the start
    of the server and of the prefix's services again (about 2 s of wall time, almost no CPU): the module's
    wine runs are spaced further apart than that by the Linux and qemu runs between them. A server already
    running for the prefix is left as it is (``wineserver -p`` then says so and exits).
    """
    server = wineserver()
    env = wine_environment()
    # the server needs its prefix folder; an empty one is filled by the first wine run (wineboot), as a new one is
    Path(env["WINEPREFIX"]).mkdir(parents=True, exist_ok=True)
    if server:  # the server detaches itself (this returns once it is up) and keeps no pipe of ours open
        subprocess.run([server, "-p30"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60)


def stop_wineserver() -> None:
    """End the wineserver of the tests' prefix (it lingers a few seconds after the last wine process)."""
    server = wineserver()
    if server:
        subprocess.run([server, "-k"], env=wine_environment(), capture_output=True, timeout=60)


@dataclass(frozen=True)
class Host:
    """The test host compiled for one platform."""

    platform: str
    binary: Path

    def command(self, args: list[str]) -> tuple[list[str], dict[str, str] | None]:
        if self.platform == "win64":
            return [wine(), str(self.binary), *args], wine_environment()
        if self.platform == "aarch64-linux":
            return ["qemu-aarch64", "-L", AARCH64_SYSROOT, str(self.binary), *args], None
        return [str(self.binary), *args], None

    def path(self, path: Path) -> str:
        """``path`` as the host program sees it (wine: drive Z: is the Linux root)."""
        return "Z:" + str(path).replace("/", "\\") if self.platform == "win64" else str(path)

    def run(self, version: int, mode: str, library: Path, token: str, stop: float, step: float, out: Path,
            nx: int, nz: int, items: list[str], timeout: float = 600) -> np.ndarray:
        """Run the FMU ``library`` and read the CSV: rows (time, the value references of ``items``)."""
        cmd, env = self.command([str(version), mode, self.path(library), token, repr(stop), repr(step),
                                 self.path(out), str(nx), str(nz), *items])
        # The host's output goes to a file, not a pipe: a wine run starts the prefix's session processes
        # (services.exe, winedevice.exe), which inherit its standard streams and outlive it, so reading a pipe
        # to its end would wait for them (seconds per run, for nothing) instead of for the host alone.
        with tempfile.TemporaryFile("w+") as log:
            proc = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                  timeout=timeout)
            log.seek(0)
            text = log.read()
        if proc.returncode != 0:
            raise AssertionError(f"{self.platform} host failed ({proc.returncode}): {text[-2000:]}")
        return np.loadtxt(out, delimiter=",", skiprows=1, ndmin=2)


def compile_host(platform: str, folder: Path) -> Host:
    """The test host for ``platform`` in ``folder``, compiled with -Wall -Wextra -Wpedantic -Werror."""
    suffix = ".exe" if platform == "win64" else ""
    binary = folder / f"host-{platform}{suffix}"
    libs = [] if platform == "win64" else ["-ldl"]
    cmd = [COMPILERS[platform], "-std=c99", "-O2", "-ffp-contract=off", *WARNINGS, f"-I{INCLUDE / 'fmi2'}",
           f"-I{INCLUDE / 'fmi3'}", "-o", str(binary), str(HOST_SOURCE), *libs]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return Host(platform, binary)
