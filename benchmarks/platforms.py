"""FMU binaries for several platforms: compile time (concurrent vs one after another) and run time per platform.

Run from the repository root (needs the cross compilers, wine and qemu-user; ``scripts/test.sh`` installs them)::

    python benchmarks/platforms.py [--system examples/rolling_disk.toml] [--repeats 2] [--fresh-wine-prefix]

The table gives the time to compile the FMU's sources (runtime and generated ``model.c``, FMI 2.0) for
``linux64``, ``win64`` and ``aarch64-linux`` with :func:`bridge.fmu.build.compile_binaries` (the three compilers
at once) and with one compiler after the other, and the time of one 2 s Co-Simulation run (step 0.01 s) of each
platform's binary through the test host (``tests/fmi_host/host.c``: native, under wine, under qemu-aarch64).
``--fresh-wine-prefix`` also times the creation of a new wine prefix (the first wine run on a machine).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import fmpy

import bridge
from bridge.fmu.build import build_fmu, compile_binaries, toolchains

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
from timing import best, machine  # noqa: E402

from tests.platform_hosts import compile_host, missing, stop_wineserver, wine, wineserver  # noqa: E402

PLATFORMS = ("linux64", "win64", "aarch64-linux")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", default=str(ROOT / "examples" / "rolling_disk.toml"))
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--fresh-wine-prefix", action="store_true")
    args = ap.parse_args(argv)
    absent = [why for why in map(missing, PLATFORMS) if why]
    if absent:
        print("\n".join(absent), file=sys.stderr)
        return 2
    print(machine())
    with tempfile.TemporaryDirectory(prefix="nhbridge-bench-platforms-") as tmp:
        folder = Path(tmp)
        eom = bridge.derive(bridge.load_system(args.system), "lagrange")
        fmu = build_fmu(eom, folder / "model.fmu", 2, platforms="all")
        with zipfile.ZipFile(fmu) as zf:
            zf.extractall(folder / "fmu")
        src = folder / "fmu" / "sources"
        sources = sorted(src.glob("*.c"))
        tools = toolchains("all")
        flags = ["-Wall", "-Wextra", f"-I{src}"]
        name = eom.system.name
        t_together, _ = best(lambda: compile_binaries(folder / "a", name, sources, flags, 2, tools, name),
                             args.repeats)

        def one_after_another() -> None:
            for p, cc in tools.items():
                compile_binaries(folder / "b", name, sources, flags, 2, {p: cc}, name)

        t_apart, _ = best(one_after_another, args.repeats)
        print(f"{name}: compile for {', '.join(PLATFORMS)}: concurrently {t_together:.1f} s, "
              f"one after another {t_apart:.1f} s (best of {args.repeats})")
        md = fmpy.read_model_description(str(folder / "fmu"))
        items = [str(v.valueReference) for v in md.modelVariables if v.type == "Real"]
        for platform in PLATFORMS:
            host = compile_host(platform, folder)
            library = folder / "fmu" / "binaries" / platform / (name + (".dll" if platform == "win64" else ".so"))
            t_run, _ = best(lambda host=host, library=library: host.run(
                2, "cs", library, md.guid, 2.0, 0.01, folder / f"{host.platform}.csv", len(md.derivatives),
                md.numberOfEventIndicators or 0, items), args.repeats)
            print(f"  {platform:<14} 2 s Co-Simulation through the test host: {t_run:.2f} s")
        stop_wineserver()
        if args.fresh_wine_prefix:
            prefix = folder / "wine-prefix"
            env = {**os.environ, "WINEDEBUG": "-all", "WINEPREFIX": str(prefix),
                   "WINEDLLOVERRIDES": "mscoree,mshtml="}
            t0 = time.perf_counter()
            subprocess.run([wine(), "cmd", "/c", "exit"], env=env, capture_output=True, timeout=600)
            print(f"  a new wine prefix: {time.perf_counter() - t0:.1f} s")
            subprocess.run([wineserver(), "-k"], env=env, capture_output=True, timeout=60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
