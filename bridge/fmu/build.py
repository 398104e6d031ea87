"""Native FMUs: generated C for one model plus the fixed runtime in ``fmu/``.

One :class:`FmuLayout` (value references and variable kinds) is computed from the equations and
drives both the generated C (``NHB_VARIABLES``) and ``modelDescription.xml`` (FMI 2.0 or 3.0), so
the two cannot drift. The C comes from sympy's C99 printer after one joint CSE pass over the mass
matrix, forcing and kinematics; the mass-matrix system is solved at run time by the runtime's LU
with partial pivoting (``nhb_lu_solve``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from ..derivation.eom import EquationsOfMotion
from ..errors import CompilerNotFoundError, ExportError
from .layout import PLATFORM, layout
from .model_c import model_c
from .model_description import build_description, model_description

# -- build ---------------------------------------------------------------------------------------------
RUNTIME = resources.files("bridge.fmu.runtime")  # the C runtime (top-level fmu/), shipped as package data
RUNTIME_SOURCES = {2: ["nhb_linalg.c", "nhb_core.c", "nhb_split.c", "nhb_jacobian.c", "fmi2_runtime.c"],
                   3: ["nhb_linalg.c", "nhb_core.c", "nhb_split.c", "nhb_jacobian.c", "fmi3_runtime.c"]}


NO_COMPILER_HINT = ("building an FMU needs a C compiler: install gcc or clang (Debian/Ubuntu: apt-get install gcc; "
                    "Fedora: dnf install gcc) or set CC to one")


def compiler() -> str:
    """The C compiler command: ``$CC`` when set, else ``cc``, ``gcc`` or ``clang`` on PATH; CompilerNotFoundError."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc or not cc.split() or not shutil.which(cc.split()[0]):
        env = os.environ.get("CC")
        where = f"CC={env!r} is not an executable" if env else "no cc, gcc or clang on PATH"
        raise CompilerNotFoundError(f"no C compiler found ({where}); {NO_COMPILER_HINT}")
    return cc


def output_path(path: str | Path) -> Path:
    """The FMU's target path, checked: it ends in .fmu and its folder exists or can be made."""
    path = Path(path)
    if path.suffix != ".fmu":
        raise ExportError(f"{path}: an FMU file must end in .fmu")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{path}: cannot write here ({exc.strerror or exc}); choose a writable output path") from exc
    return path


def _compile(cc: str, binary: Path, sources: list[Path], flags: list[str], what: str) -> None:
    """Compile ``sources`` into the shared library ``binary`` (C99, -O2, position independent).

    An integer overflow or an integer constant too large for its type is an error, not a warning: either
    would change a number of the equations silently.
    """
    binary.parent.mkdir(parents=True, exist_ok=True)
    cmd = [*cc.split(), "-std=c99", "-O2", "-fPIC", "-shared", "-Werror=overflow", *flags, "-o", str(binary),
           *map(str, sources), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    too_large = any(t in proc.stderr for t in ("integer constant is too large", "integer literal is too large"))
    if proc.returncode != 0 or too_large:
        raise ExportError(f"compiling {what} failed ({cmd[0]}): {proc.stderr.strip()[:2000]}")


def _pack(path: Path, folder: Path) -> Path:
    """Zip modelDescription.xml, binaries/ and sources/ of ``folder`` into the FMU ``path`` atomically and
    reproducibly (fixed member order, time stamps and modes: :func:`.archive.write_zip`)."""
    from .archive import write_zip

    members = [folder / "modelDescription.xml", *sorted((folder / "binaries").rglob("*.so")),
               *sorted((folder / "sources").iterdir())]
    write_zip(path, [(f.relative_to(folder).as_posix(), f) for f in members])
    return path


def build_fmu(eom: EquationsOfMotion, path: str | Path, fmi_version: int = 2,
              jacobian: bool | str | None = "auto") -> Path:
    """Generate, compile and pack a source FMU with the Linux x86-64 binary; written atomically.

    ``jacobian``: generate the Jacobian code for directional derivatives (``True``/``False``; ``"auto"``: when
    the system has at most ``bridge.fmu.jacobian.JACOBIAN_MAX_STATES`` states).
    """
    if fmi_version not in (2, 3):
        raise ExportError(f"FMI version must be 2 or 3, got {fmi_version}")
    path = output_path(path)
    cc = compiler()
    system = eom.system
    lay = layout(eom, fmi_version, jacobian)
    jac = ":jacobian" if lay.jacobian else ""
    guid = "{" + str(uuid.uuid5(uuid.NAMESPACE_URL,
                                f"nhbridge:{system.name}:{eom.method}:{model_c_hash(eom)}{jac}")) + "}"
    return pack_source_fmu(path, system.name, fmi_version, model_c(eom, lay, guid),
                           lambda c_files: model_description(eom, lay, guid, c_files), cc)


def pack_source_fmu(path: Path, name: str, fmi_version: int, model_c_text: str,
                    description: Callable[[list[str]], bytes], cc: str) -> Path:
    """The source FMU ``path`` (model identifier ``name``) of a generated ``model.c`` beside the fixed runtime:
    ``sources/`` with the runtime's C files and headers, the binary compiled from them with ``cc``, FMI 3's
    ``buildDescription.xml`` and ``description(c_files)`` as ``modelDescription.xml``; packed atomically."""
    sources = RUNTIME_SOURCES[fmi_version]
    with tempfile.TemporaryDirectory(prefix="nhbridge-fmu-") as tmp:
        folder = Path(tmp)
        src = folder / "sources"
        src.mkdir()
        (src / "model.c").write_text(model_c_text, encoding="utf-8")
        for file in [*sources, "nhb_model.h", "nhb_core.h", "nhb_split.h", "nhb_jacobian.h"]:
            shutil.copy(RUNTIME / file, src / file)
        for header in (RUNTIME / "include" / f"fmi{fmi_version}").iterdir():
            if header.name.endswith(".h"):
                shutil.copy(header, src / header.name)
        _compile(cc, folder / "binaries" / PLATFORM[fmi_version] / f"{name}.so",
                 [src / "model.c", *[src / s for s in sources]],
                 ["-fvisibility=hidden", "-Wall", "-Wextra", f"-I{src}"], name)
        c_files = ["model.c", *sources]  # what an importer compiles to rebuild the binary (fmpy compile)
        if fmi_version == 3:
            (src / "buildDescription.xml").write_bytes(build_description(name, c_files))
        (folder / "modelDescription.xml").write_bytes(description(c_files))
        return _pack(path, folder)


def model_c_hash(eom: EquationsOfMotion) -> str:
    import hashlib

    from ..derivation.efforts import switched

    text = "|".join(map(str, [eom.method, *eom.mass_matrix, *eom.forcing, *eom.kinematics,
                              *[p.name for p in eom.system.parameters], *switched(eom.system)]))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


