"""The platforms an FMU's binaries are built for, their folder names and their (cross) compilers.

Three platforms: Linux x86-64, Windows x64 and Linux aarch64. The folder under ``binaries/`` is the standard's:
FMI 2 ``linux64`` and ``win64``, FMI 3 ``x86_64-linux``, ``x86_64-windows`` and ``aarch64-linux``. FMI 2 names
x86 platforms only (``linux64`` is 64-bit x86); FMI 2.0.5 refers every other platform to the FMI 3 platform
tuples, so the aarch64 binary of an FMI 2 FMU goes to ``aarch64-linux`` as well. The host's own platform is
compiled with :func:`~bridge.tools.gcc.compiler` (``$CC``); the others with the cross compilers of Debian's
packages (``gcc-mingw-w64-x86-64``, ``gcc-aarch64-linux-gnu`` with ``libc6-dev-arm64-cross``), found and run by
:mod:`bridge.tools.gcc`.
"""

from __future__ import annotations

import platform as _platform
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import CompilerNotFoundError, ExportError
from ..tools.gcc import NO_COMPILER_HINT, compiler, find_cross_compiler

__all__ = ["ALIASES", "LINUX_AARCH64", "LINUX_X86_64", "NO_COMPILER_HINT", "PLATFORMS", "WINDOWS_X86_64", "Platform",
           "add_platform_option", "compiler", "compilers", "cross_compiler", "host_platform", "parse_platforms",
           "platform_names", "with_host"]


@dataclass(frozen=True)
class Platform:
    """One target: its name on the command line, its ``binaries/`` folders, library suffix and cross compiler."""

    name: str                 # --platform NAME (the FMI 2 folder, or the FMI 3 one where FMI 2 has none)
    fmi2: str                 # binaries/<fmi2> of an FMI 2.0 FMU
    fmi3: str                 # binaries/<fmi3> of an FMI 3.0 FMU
    machine: str              # platform.machine() of a host that runs it natively
    system: str               # sys.platform prefix of such a host
    cross: str                # the cross compiler's command on a Debian/Ubuntu host
    packages: tuple[str, ...]  # the Debian packages that install it
    suffix: str               # the shared library's file suffix
    flags: tuple[str, ...]    # compiler flags for a shared library of this platform

    def folder(self, fmi_version: int) -> str:
        """Return the folder below ``binaries/`` for an FMI ``fmi_version`` FMU."""
        return self.fmi2 if fmi_version == 2 else self.fmi3

    @property
    def is_host(self) -> bool:
        """Whether the host (the computer running nhbridge) runs the platform's binaries natively."""
        machine = _platform.machine().lower().replace("amd64", "x86_64").replace("arm64", "aarch64")
        return sys.platform.startswith(self.system) and machine == self.machine


LINUX_X86_64 = Platform("linux64", "linux64", "x86_64-linux", "x86_64", "linux", "x86_64-linux-gnu-gcc",
                        ("gcc-x86-64-linux-gnu",), ".so", ("-fPIC", "-fvisibility=hidden"))
WINDOWS_X86_64 = Platform("win64", "win64", "x86_64-windows", "x86_64", "win", "x86_64-w64-mingw32-gcc",
                          ("gcc-mingw-w64-x86-64",), ".dll", ("-static-libgcc",))
LINUX_AARCH64 = Platform("aarch64-linux", "aarch64-linux", "aarch64-linux", "aarch64", "linux",
                         "aarch64-linux-gnu-gcc", ("gcc-aarch64-linux-gnu", "libc6-dev-arm64-cross"), ".so",
                         ("-fPIC", "-fvisibility=hidden"))
PLATFORMS: tuple[Platform, ...] = (LINUX_X86_64, WINDOWS_X86_64, LINUX_AARCH64)

#: every name --platform accepts (the FMI 2 and FMI 3 folder names) and its platform
ALIASES = {name: p for p in PLATFORMS for name in (p.name, p.fmi2, p.fmi3)}


def host_platform() -> Platform:
    """Return the host's platform; an ExportError on a host none of :data:`PLATFORMS` describes."""
    for p in PLATFORMS:
        if p.is_host:
            return p
    raise ExportError(f"no FMU platform for the host ({sys.platform}, {_platform.machine()}); nhbridge builds "
                      f"{', '.join(p.name for p in PLATFORMS)} binaries")


def parse_platforms(items: Iterable[str] | str | None) -> tuple[Platform, ...]:
    """Return the platforms named by ``items`` (each a name or a comma list, ``all`` for every platform).

    In the order of :data:`PLATFORMS`, each once; None or nothing: the host's. An unknown name is an ExportError.
    """
    if items is None:
        return (host_platform(),)
    if isinstance(items, str):
        items = [items]
    names = [n.strip() for item in items for n in str(item).split(",") if n.strip()]
    if not names:
        return (host_platform(),)
    unknown = [n for n in names if n != "all" and n not in ALIASES]
    if unknown:
        raise ExportError(f"unknown platform {', '.join(map(repr, unknown))}; choose from "
                          f"{', '.join(p.name for p in PLATFORMS)} (or their FMI 3 names "
                          f"{', '.join(p.fmi3 for p in PLATFORMS)}), a comma list, or all")
    chosen = set(PLATFORMS) if "all" in names else {ALIASES[n] for n in names}
    return tuple(p for p in PLATFORMS if p in chosen)


def platform_names(platforms: Iterable[Platform]) -> str:
    """Return the platforms' names as a comma-separated list.

    Parameters
    ----------
    platforms : iterable of Platform
        The platforms.

    Returns
    -------
    str
        E.g. ``"linux64, win64"``.
    """
    return ", ".join(p.name for p in platforms)


def cross_compiler(target: Platform) -> str:
    """Return the compiler command for ``target``.

    :func:`compiler` on the host's platform, else the cross compiler on PATH; a CompilerNotFoundError naming the Debian
    packages when it is missing.
    """
    if target.is_host:
        return compiler()
    return find_cross_compiler(target.cross, target.name, target.packages)


def compilers(platforms: Iterable[Platform]) -> dict[Platform, str]:
    """Return the compiler of every platform; one CompilerNotFoundError naming every missing toolchain's packages."""
    found: dict[Platform, str] = {}
    missing: list[str] = []
    for p in platforms:
        try:
            found[p] = cross_compiler(p)
        except CompilerNotFoundError as exc:
            missing.append(str(exc))
    if missing:
        raise CompilerNotFoundError("; ".join(missing))
    return found


def add_platform_option(parser, what: str = "the FMU") -> None:
    """Add ``--platform NAME[,NAME]`` (repeatable, ``all``) to a command that builds FMUs.

    The names land in ``args.platform`` (a list, None when not given) for :func:`~bridge.fmu.build.toolchains`.
    """
    parser.add_argument("--platform", action="append", default=None, metavar="NAME[,NAME]",
                        help=f"platforms whose binaries {what} carries: {', '.join(p.name for p in PLATFORMS)} (FMI 3 "
                             "folder names accepted), comma-separated or repeated, or all (default: the host's); "
                             "other platforms need their cross compiler (Debian: "
                             + ", ".join(" ".join(p.packages) for p in PLATFORMS[1:]) + ")")


def with_host(items: Iterable[str] | str | None) -> tuple[str, ...]:
    """Return the platform names of ``items`` plus the host's: for FMUs that are also run on the host."""
    return tuple(p.name for p in dict.fromkeys((host_platform(), *parse_platforms(items))))
