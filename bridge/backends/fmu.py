"""FMUs from other Modelica compilers: Rumoca (``fmi2`` codegen + $CC) and OpenModelica (OMPython).

The exported model's text goes to the compiler in :mod:`bridge.tools` (:mod:`~bridge.tools.rumoca`,
:mod:`~bridge.tools.openmodelica`); Rumoca's C is compiled for the platforms and packed by :mod:`bridge.fmu.build`.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..atomic import atomic_file
from ..derivation.eom import EquationsOfMotion
from ..errors import ExportError
from ..fmu.build import compile_binaries, output_path, pack_folder, toolchains
from ..fmu.platforms import parse_platforms
from ..modelica.export import model_source
from ..modelica.ports import library_files
from ..tools.openmodelica import build_model_fmu
from ..tools.rumoca import RUMOCA_MISSING, codegen_fmi2
from .openmodelica import model_session


def build_rumoca_fmu(eom: EquationsOfMotion, path: str | Path, level: str = "index1",
                     platforms: Iterable[str] | str | None = None) -> Path:
    """Return the exported Modelica model compiled to an FMI 2.0 FMU by Rumoca's ``fmi2`` code generation.

    Rumoca writes a self-contained C file and modelDescription.xml; nhbridge compiles it with ``$CC`` (and the
    cross compilers of ``platforms``, see :func:`~bridge.fmu.build.build_fmu`) and packs the FMU (sources
    included) atomically. Rumoca's Co-Simulation is fixed-step explicit Euler.
    """
    try:
        import rumoca
    except ImportError as exc:
        raise ExportError(f"{RUMOCA_MISSING}, or use --backend native") from exc
    tools = toolchains(platforms)
    path = output_path(path)
    name = eom.system.name
    rename, original = _rumoca_names(eom)
    try:
        # outputs through the velocity variables: Rumoca's FMU output function evaluates der(q) as 0
        text = model_source(eom, level, rename=rename, outputs_via_der=False)
        generated = codegen_fmi2(rumoca, text, name, library_files(eom))
    except (rumoca.RumocaError, RuntimeError) as exc:  # codegen template errors surface as RuntimeError
        raise ExportError(f"Rumoca cannot generate an FMU for {name}: {exc}; use --backend native") from exc
    with tempfile.TemporaryDirectory(prefix="nhbridge-rumoca-") as tmp:
        folder = Path(tmp)
        generated.save_all(str(folder))
        _restore_names(folder / "modelDescription.xml", original)
        declare_sources(folder)
        compile_binaries(folder, name, sorted((folder / "sources").glob("*.c")), [], 2, tools,
                         f"Rumoca's C for {name}")
        return pack_folder(path, folder)


#: prefix of every user name in the text given to Rumoca (no user name starts with ``nhb_``, see the loader)
RUMOCA_PREFIX = "nhb_v_"


def _rumoca_names(eom: EquationsOfMotion) -> tuple[dict[str, str], dict[str, str]]:
    """Return the user names as Rumoca gets them, and the Modelica variable names of the FMU back to the user's.

    Rumoca's C template unpacks every variable into a C local of the same name inside functions whose own
    parameters and locals (``fmi2Component c``, ``x_nominal``, ``nx``, ...) a user name can collide with
    (``'c' redeclared``); a prefix no template name has keeps every user name clear of them. The FMU's
    modelDescription.xml gets the user's names back.
    """
    system = eom.system
    users = [*(c.name for c in system.coordinates), *(p.name for p in system.parameters),
             *(u.name for u in system.inputs), *system.outputs]
    rename = {n: RUMOCA_PREFIX + n for n in users}
    original = {RUMOCA_PREFIX + n: n for n in users}
    for c in system.coordinates:
        original[f"der_{RUMOCA_PREFIX}{c.name}"] = f"der_{c.name}"
        original[f"der_der_{RUMOCA_PREFIX}{c.name}"] = f"der_der_{c.name}"
    return rename, original


def declare_sources(folder: Path) -> None:
    """Declare FMI 2 ``<SourceFiles>`` in ModelExchange and CoSimulation: the C files of ``sources/``.

    Rumoca writes them self-contained but does not list them; importers that build from sources need the list.
    """
    from lxml import etree

    path = folder / "modelDescription.xml"
    tree = etree.parse(str(path))
    files = sorted(p.name for p in (folder / "sources").glob("*.c"))
    for el in tree.getroot():
        if el.tag in ("ModelExchange", "CoSimulation") and el.find("SourceFiles") is None:
            listing = etree.Element("SourceFiles")
            for name in files:
                etree.SubElement(listing, "File", name=name)
            el.insert(0, listing)
    path.write_bytes(etree.tostring(tree, xml_declaration=True, encoding="UTF-8"))


def _restore_names(model_description: Path, original: dict[str, str]) -> None:
    """Map every ``name="..."`` of a ScalarVariable back to the user's names."""
    def variable(match: re.Match) -> str:
        name = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", lambda m: original.get(m.group(), m.group()), match.group(2))
        return match.group(1) + name + match.group(3)

    text = model_description.read_text(encoding="utf-8")
    model_description.write_text(re.sub(r'(<ScalarVariable\s+name=")([^"]*)(")', variable, text), encoding="utf-8")


OMC_MISSING_FMU = ("OpenModelica's omc was not found on PATH or in OPENMODELICAHOME; install OpenModelica or use "
                   "--backend native")


def build_openmodelica_fmu(eom: EquationsOfMotion, path: str | Path, fmi_version: int = 2,
                           level: str = "index1", platforms: Iterable[str] | str | None = None) -> Path:
    """Build an FMU of the exported Modelica model with OpenModelica (``buildModelFMU`` in omc, via OMPython).

    Only the host's platform is built: omc cross-compiles through its own Docker images, which nhbridge does
    not drive.
    """
    chosen = parse_platforms(platforms)
    if len(chosen) != 1 or not chosen[0].is_host:
        raise ExportError(f"the openmodelica backend builds the binary of the host only, not "
                          f"{', '.join(p.name for p in chosen if not p.is_host)}; use --backend native for other "
                          "platforms")
    path = output_path(path)
    name = eom.system.name
    with model_session(eom, level, OMC_MISSING_FMU, ExportError) as (omc, _):
        built = build_model_fmu(omc, name, fmi_version)
        with atomic_file(path) as tmp:
            shutil.copyfile(str(built), tmp)
    return path
