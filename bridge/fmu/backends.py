"""FMUs from other Modelica compilers: Rumoca (``fmi2`` codegen + $CC) and OpenModelica (OMPython)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ..atomic import atomic_file
from ..derivation.eom import EquationsOfMotion
from ..errors import ExportError
from .build import _compile, _output_path, _pack, compiler


def build_rumoca_fmu(eom: EquationsOfMotion, path: str | Path, level: str = "index1") -> Path:
    """The exported Modelica model compiled to an FMI 2.0 FMU by Rumoca's ``fmi2`` code generation.

    Rumoca writes a self-contained C file and modelDescription.xml; nhbridge compiles it with ``$CC``
    and packs the FMU (sources included) atomically. Rumoca's Co-Simulation is fixed-step explicit Euler.
    """
    try:
        import rumoca
    except ImportError as exc:
        raise ExportError('Rumoca is not installed; pip install --only-binary rumoca "rumoca>=0.9.9,<0.10", or use '
                          "--backend native") from exc
    from ..modelica.export import model_source

    path = _output_path(path)
    cc = compiler()
    name = eom.system.name
    try:
        model = rumoca.loads(model_source(eom, level), model=name, filename=f"{name}.mo")
        generated = model.codegen("fmi2")
    except (rumoca.RumocaError, RuntimeError) as exc:  # codegen template errors surface as RuntimeError
        raise ExportError(f"Rumoca cannot generate an FMU for {name}: {exc}; use --backend native") from exc
    with tempfile.TemporaryDirectory(prefix="nhbridge-rumoca-") as tmp:
        folder = Path(tmp)
        generated.save_all(str(folder))
        _compile(cc, folder / "binaries" / "linux64" / f"{name}.so", sorted((folder / "sources").glob("*.c")), [],
                 f"Rumoca's C for {name}")
        return _pack(path, folder)


OMC_MISSING_FMU = ("OpenModelica's omc was not found on PATH or in OPENMODELICAHOME; install OpenModelica or use "
                   "--backend native")


def build_openmodelica_fmu(eom: EquationsOfMotion, path: str | Path, fmi_version: int = 2,
                           level: str = "index1") -> Path:
    """The exported Modelica model compiled by OpenModelica (``buildModelFMU`` in omc, through OMPython)."""
    from ..modelica.check import omc_session

    path = _output_path(path)
    name = eom.system.name
    with omc_session(eom, level, OMC_MISSING_FMU, ExportError) as (omc, _):
        built = omc.sendExpression(f'buildModelFMU({name}, version="{fmi_version}.0", fmuType="me_cs")')
        if not built or not Path(str(built)).exists():
            raise ExportError(f"omc could not build an FMU for {name}: {omc.sendExpression('getErrorString()')}")
        with atomic_file(path) as tmp:
            shutil.copyfile(str(built), tmp)
    return path
