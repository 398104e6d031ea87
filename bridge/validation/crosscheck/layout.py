"""The folder layout of the FMI Cross-Check rules 4.1.

* exported FMUs (rules §9.1.4, §9.1.5) go to
  ``fmus/{FMI_Version}/{FMI_Type}/{Platform}/{Tool_Name}/{Tool_Version}/{Model_Name}/``; FMI_Version ``2.0``
  (the rules also list ``1.0``; nhbridge's FMI 3.0 FMUs go to ``3.0``, which rules 4.1 do not list yet),
  FMI_Type ``me`` or ``cs``, Platform ``linux64``, tool ``nhbridge`` at ``bridge.__version__``;
* import results (§9.2.3, §9.2.4) go to ``results/{FMI_Version}/{FMI_Type}/{Platform}/
  {Importing_Tool_Name}/{Importing_Tool_Version}/{Exporting_Tool_Name}/{Exporting_Tool_Version}/{Model_Name}/``;
* every folder has a README, ``ReadMe.md``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...version import __version__

TOOL_NAME = "nhbridge"
PLATFORM = "linux64"
FMI_TYPES = {"me": "ModelExchange", "cs": "CoSimulation"}
FMI_TYPE_TITLES = {"me": "Model Exchange", "cs": "Co-Simulation"}
README_NAME = "ReadMe.md"
_VERSION_DIR = re.compile(r"\d+\.\d+")


def fmi_version_dir(fmi_version: int | str) -> str:
    """Return the FMI_Version folder of a version: ``2`` -> ``"2.0"``."""
    return f"{int(fmi_version)}.0" if str(fmi_version).isdigit() else str(fmi_version)


def model_folder(root: str | Path, fmi_version: int | str, fmi_type: str, model: str, tool: str = TOOL_NAME,
                 tool_version: str = __version__, platform: str = PLATFORM) -> Path:
    """Return ``root/fmus/{FMI_Version}/{FMI_Type}/{Platform}/{Tool_Name}/{Tool_Version}/{Model_Name}`` (§9.1.5)."""
    return Path(root) / "fmus" / fmi_version_dir(fmi_version) / fmi_type / platform / tool / tool_version / model


def results_folder(root: str | Path, fmi_version: int | str, fmi_type: str, platform: str, exporter: str,
                   exporter_version: str, model: str, importer: str = TOOL_NAME,
                   importer_version: str = __version__) -> Path:
    """Return the results folder of a cross-check run (rules §9.2.4).

    ``root/results/{FMI_Version}/{FMI_Type}/{Platform}/{Importing_Tool}/{Version}/{Exporting_Tool}/{Version}/{Model_Name}``.
    """
    return (Path(root) / "results" / fmi_version_dir(fmi_version) / fmi_type / platform / importer
            / importer_version / exporter / exporter_version / model)


@dataclass(frozen=True)
class Layout:
    """Where a model folder sits in a cross-check tree (``root`` holds ``fmus/``)."""

    root: Path
    fmi_version: str
    fmi_type: str
    platform: str
    tool: str
    tool_version: str
    model: str


def parse_layout(model_dir: str | Path) -> Layout | None:
    """Return the layout of ``.../fmus/2.0/me/linux64/Tool/1.0/Model``, or None for a folder elsewhere."""
    path = Path(os.path.abspath(model_dir))
    parts = path.parts
    if len(parts) < 8 or parts[-7] != "fmus" or parts[-5] not in FMI_TYPES or not _VERSION_DIR.fullmatch(parts[-6]):
        return None
    return Layout(path.parents[6], parts[-6], parts[-5], parts[-4], parts[-3], parts[-2], parts[-1])
