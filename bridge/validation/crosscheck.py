"""FMI Cross-Check folders: export a system's FMU with its reference, and check an FMU against a reference.

Follows the *FMI Cross-Check Rules*, version 4.1 (``FMI-CROSS-CHECK-RULES.md`` and ``README.md`` of
https://github.com/modelica/fmi-cross-check), and the repository's validator
``fmpy.cross_check.validate_vendor_repo``:

* exported FMUs (rules §9.1.4, §9.1.5) go to
  ``fmus/{FMI_Version}/{FMI_Type}/{Platform}/{Tool_Name}/{Tool_Version}/{Model_Name}/`` with
  ``{Model_Name}.fmu``, ``{Model_Name}_ref.csv``, ``{Model_Name}_ref.opt``, ``{Model_Name}_in.csv``
  (only when the FMU has inputs) and a README (``ReadMe.md``); FMI_Version ``2.0`` (the rules also
  list ``1.0``; nhbridge's FMI 3.0 FMUs go to ``3.0``, which rules 4.1 do not list yet), FMI_Type ``me``
  or ``cs``, Platform ``linux64``, tool ``nhbridge`` at ``bridge.__version__``;
* import results (§9.2.3, §9.2.4) go to ``results/{FMI_Version}/{FMI_Type}/{Platform}/
  {Importing_Tool_Name}/{Importing_Tool_Version}/{Exporting_Tool_Name}/{Exporting_Tool_Version}/
  {Model_Name}/`` with exactly one of the marker files ``passed``, ``failed`` (``rejected`` is not
  written: an FMU nhbridge cannot load is reported as bad input), ``{Model_Name}_out.csv`` (no longer
  required by rules 4.1, but ``validate_vendor_repo`` reads it whenever ``passed`` exists) and
  ``ReadMe.md``;
* ``_ref.opt`` (§9.1.4) is CSV: one ``Name,value`` per line with the required elements ``StartTime``,
  ``StopTime``, ``StepSize`` (0 means a variable-step solver) and ``RelTol``, optional ``AbsTol``,
  ``SolverType`` and ``OutputIntervalLength``. nhbridge writes numeric elements only and no comments,
  because ``fmpy.util.read_ref_opt_file`` converts every value with ``float``;
* CSV files (Appendix B): comma separators between elements only; numbers unquoted, as C floating-point
  literals; first column the time, monotonically increasing; first line the variable names in double
  quotes, exactly as in ``modelDescription.xml``; data from line 2 on, no units or comments; at most
  1 MB. An FMU must not exceed 10 MB (``validate_vendor_repo``).

The comparison (:func:`check_crosscheck`) applies two tests to every signal of ``_ref.csv``, and
``passed`` needs both:

1. the cross-check band of the repository's validator (``fmpy.cross_check.validate_result``): the
   reference resampled on 1000 points from StartTime to StopTime, widened by ±10 samples in time and
   ±10 % of its range in value; fails when more than 10 % of the result's samples lie outside;
2. nhbridge's csv-compare tube (:func:`bridge.validation.metrics.compare`): ±``tube`` (0.002) of the
   signal's range in value and ±``time_tolerance`` (1e-3) of the time span; fails on any sample outside.

The band alone would pass clearly wrong results (10 % of the range, 10 % of the samples), so
nhbridge's tube decides as well; a ``passed`` written here is always one the repository's validator
accepts. The band has a blind spot the export avoids: for a signal that is constant up to integration
noise (a conserved energy) it is 10 % of that noise, and no importer could pass; such signals are left
out of ``_ref.csv`` (and named in the ReadMe).
"""

from __future__ import annotations

import csv
import hashlib
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.ndimage import maximum_filter1d, minimum_filter1d

from .. import __version__
from ..errors import BridgeError, ExportError, Problem, SimulationError, SystemFileError, ValidationError
from .metrics import CONSTANT, SignalMetrics, compare
from .settings import DEFAULT_TIME_TOLERANCE, DEFAULT_TUBE

TOOL_NAME = "nhbridge"
PLATFORM = "linux64"
FMI_TYPES = {"me": "ModelExchange", "cs": "CoSimulation"}
FMI_TYPE_TITLES = {"me": "Model Exchange", "cs": "Co-Simulation"}
README_NAME = "ReadMe.md"
MAX_CSV_BYTES = 1_000_000   # Appendix B: a CSV file must not be larger than 1 MB
MAX_FMU_BYTES = 10_000_000  # validate_vendor_repo: an FMU must not be larger than 10 MB
RECOMMENDED_SIGNALS = 10    # §9.1.4: "at most 10 of the important variables" (a recommendation)
REFERENCE_RTOL, REFERENCE_ATOL = 1e-12, 1e-14
REFERENCE_INTERVALS = 500   # at most 501 rows: fmpy's cross-check report warns above 1000 samples
ME_RTOL_FLOOR = 1e-10       # CVode is not asked for more than this, whatever RelTol says
BAND_POINTS, BAND_WINDOW, BAND_WIDTH, BAND_OUTLIERS = 1000, 21, 0.1, 0.1  # fmpy.cross_check.validate_signal
NUMERIC_OPTIONS = ("StartTime", "StopTime", "StepSize", "RelTol", "AbsTol", "OutputIntervalLength")
REQUIRED_OPTIONS = ("StartTime", "StopTime", "StepSize", "RelTol")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_VERSION_DIR = re.compile(r"\d+\.\d+")
MAX_LINE_PROBLEMS = 5


# -- layout ----------------------------------------------------------------------------------------
def fmi_version_dir(fmi_version: int | str) -> str:
    """``2`` -> ``"2.0"`` (the FMI_Version folder)."""
    return f"{int(fmi_version)}.0" if str(fmi_version).isdigit() else str(fmi_version)


def model_folder(root: str | Path, fmi_version: int | str, fmi_type: str, model: str, tool: str = TOOL_NAME,
                 tool_version: str = __version__, platform: str = PLATFORM) -> Path:
    """``root/fmus/{FMI_Version}/{FMI_Type}/{Platform}/{Tool_Name}/{Tool_Version}/{Model_Name}`` (rules §9.1.5)."""
    return Path(root) / "fmus" / fmi_version_dir(fmi_version) / fmi_type / platform / tool / tool_version / model


def results_folder(root: str | Path, fmi_version: int | str, fmi_type: str, platform: str, exporter: str,
                   exporter_version: str, model: str, importer: str = TOOL_NAME,
                   importer_version: str = __version__) -> Path:
    """``root/results/{FMI_Version}/{FMI_Type}/{Platform}/{Importing_Tool}/{Version}/{Exporting_Tool}/{Version}/
    {Model_Name}`` (rules §9.2.4)."""
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
    """The layout of ``.../fmus/2.0/me/linux64/Tool/1.0/Model``, or None for a folder elsewhere."""
    path = Path(os.path.abspath(model_dir))
    parts = path.parts
    if len(parts) < 8 or parts[-7] != "fmus" or parts[-5] not in FMI_TYPES or not _VERSION_DIR.fullmatch(parts[-6]):
        return None
    return Layout(path.parents[6], parts[-6], parts[-5], parts[-4], parts[-3], parts[-2], parts[-1])


# -- CSV and options files -------------------------------------------------------------------------
def _number(x: float) -> str:
    """A C floating-point literal (Appendix B); 15 significant digits."""
    text = format(float(x), ".15g")
    return "0" if text == "-0" else text


def csv_text(time: np.ndarray, signals: dict[str, np.ndarray]) -> str:
    """A CSV by the rules: quoted names in line 1, ``time`` first, numbers from line 2, no trailing separator."""
    names = ["time", *signals]
    for name in names:
        if '"' in name or "," in name or "\n" in name:
            raise ExportError(f"variable name {name!r} cannot be written in a cross-check CSV header")
    lines = [",".join(f'"{n}"' for n in names)]
    columns = [np.asarray(time, dtype=float), *[np.asarray(v, dtype=float) for v in signals.values()]]
    for row in zip(*columns):
        lines.append(",".join(_number(v) for v in row))
    return "\n".join(lines) + "\n"


def opt_text(start: float, stop: float, step: float, rtol: float, atol: float | None = None,
             output_interval: float | None = None) -> str:
    """``_ref.opt``: required StartTime, StopTime, StepSize, RelTol; optional numeric AbsTol, OutputIntervalLength."""
    lines = [f"StartTime,{_number(start)}", f"StopTime,{_number(stop)}", f"StepSize,{_number(step)}",
             f"RelTol,{_number(rtol)}"]
    if atol is not None:
        lines.append(f"AbsTol,{_number(atol)}")
    if output_interval is not None:
        lines.append(f"OutputIntervalLength,{_number(output_interval)}")
    return "\n".join(lines) + "\n"


@dataclass
class CsvData:
    """A cross-check CSV file read and checked: the names after ``time``, the time and the columns."""

    path: Path
    names: list[str]
    time: np.ndarray
    columns: dict[str, np.ndarray]
    notes: list[str] = field(default_factory=list)

    def structured(self, names: Sequence[str] | None = None) -> np.ndarray:
        names = list(self.names if names is None else names)
        out = np.zeros(len(self.time), dtype=[("time", float)] + [(n, float) for n in names])
        out["time"] = self.time
        for n in names:
            out[n] = self.columns[n]
        return out


def _add(problems: list[Problem], source: Path, entry: str, message: str, hint: str = "") -> None:
    problems.append(Problem(entry, message, hint, str(source)))


def _read_text(path: Path, problems: list[Problem], what: str, hint: str) -> str | None:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        _add(problems, path, "", f"{what} is missing", hint)
    except IsADirectoryError:
        _add(problems, path, "", f"{what} is a folder, not a file", hint)
    except UnicodeDecodeError as exc:
        _add(problems, path, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})", "write plain ASCII CSV")
    except OSError as exc:
        _add(problems, path, "", f"cannot read the file ({exc.strerror or exc})", "check the permissions")
    return None


def read_csv_file(path: str | Path, problems: list[Problem], what: str = "the CSV file") -> CsvData | None:
    """Read a cross-check CSV (Appendix B); every problem found is added to ``problems`` (None if any)."""
    path = Path(path)
    text = _read_text(path, problems, what, "see the FMI Cross-Check rules, appendix B")
    if text is None:
        return None
    before = len(problems)
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        _add(problems, path, "", f"{what} is empty", 'write "time" and the variable names in line 1, data below')
        return None
    header = lines[0]
    names = [n.strip() for n in next(csv.reader([header], skipinitialspace=True))]
    notes = []
    if header.count('"') < 2 * len(names):
        notes.append(f"{path.name}: the names in line 1 are not all in double quotes, as the rules ask")
    if not names or names[0] != "time":
        _add(problems, path, "line 1", f'the first column must be "time", found {names[0] if names else ""!r}',
             'write the header as "time","x",...')
    if any(not n for n in names):
        _add(problems, path, "line 1", "a column has no name", "remove trailing commas; name every column")
    duplicates = sorted({n for n in names if names.count(n) > 1 and n})
    if duplicates:
        _add(problems, path, "line 1", f"duplicate column(s) {', '.join(duplicates)}", "name every column once")
    rows: list[list[float]] = []
    bad = 0
    for lineno, line in enumerate(lines[1:], start=2):
        fields = line.split(",")
        message = ""
        if len(fields) != len(names):
            message = f"{len(fields)} value(s), the header has {len(names)} column(s)"
        else:
            wrong = [f.strip() for f in fields if not _NUMBER.fullmatch(f.strip())]
            if wrong:
                message = f"{wrong[0]!r} is not a number"
        if message:
            bad += 1
            if bad <= MAX_LINE_PROBLEMS:
                _add(problems, path, f"line {lineno}", message,
                     "write only comma-separated numbers as C literals (e.g. 0.5, -1e-3), no units or comments")
            continue
        rows.append([float(f) for f in fields])
    if bad > MAX_LINE_PROBLEMS:
        _add(problems, path, "", f"{bad - MAX_LINE_PROBLEMS} more line(s) with problems", "")
    if not bad and len(rows) < 2:
        _add(problems, path, "", f"{what} has {len(rows)} data row(s), at least 2 are needed",
             "give the values at StartTime and StopTime at least")
    if len(problems) > before:
        return None
    data = np.array(rows, dtype=float)
    time = data[:, 0]
    down = np.nonzero(np.diff(time) < 0)[0]
    if down.size:
        _add(problems, path, f"line {down[0] + 3}", f"time decreases from {time[down[0]]:g} to {time[down[0] + 1]:g}",
             "the time in the first column must increase monotonically")
        return None
    if path.stat().st_size > MAX_CSV_BYTES:
        notes.append(f"{path.name} is larger than the 1 MB the rules allow")
    return CsvData(path, names[1:], time, {n: data[:, k + 1] for k, n in enumerate(names[1:])}, notes)


def read_ref_opt(path: str | Path, problems: list[Problem]) -> dict[str, float | str] | None:
    """Read ``_ref.opt`` (rules §9.1.4: ``Name, value`` lines; ``//`` comments as in the rules' example)."""
    path = Path(path)
    text = _read_text(path, problems, "the options file _ref.opt", "write StartTime, StopTime, StepSize and RelTol, "
                      "one 'Name,value' per line")
    if text is None:
        return None
    before = len(problems)
    opts: dict[str, float | str] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        body = line.split("//", 1)[0].strip()
        if not body:
            continue
        parts = [p.strip() for p in body.split(",")]
        if len(parts) != 2 or not parts[0]:
            _add(problems, path, f"line {lineno}", f"expected 'Name,value', found {body!r}", "e.g. StopTime,10")
            continue
        key, value = parts
        if key in NUMERIC_OPTIONS:
            if not _NUMBER.fullmatch(value):
                _add(problems, path, f"line {lineno}", f"{key}: {value!r} is not a number", f"e.g. {key},0.01")
                continue
            opts[key] = float(value)
        else:
            opts[key] = value
    missing = [k for k in REQUIRED_OPTIONS if k not in opts]
    if missing:
        _add(problems, path, "", f"missing required element(s) {', '.join(missing)}",
             "the rules require StartTime, StopTime, StepSize and RelTol")
    if len(problems) > before:
        return None
    start, stop, step, rtol = (float(opts[k]) for k in REQUIRED_OPTIONS)
    if not start < stop:
        _add(problems, path, "StopTime", f"StopTime {stop:g} is not after StartTime {start:g}", "")
    elif not 0 <= step <= stop - start:
        _add(problems, path, "StepSize", f"StepSize {step:g} is not within [0, StopTime - StartTime]",
             "use 0 for a variable-step solver")
    if rtol < 0:
        _add(problems, path, "RelTol", f"RelTol {rtol:g} is negative", "")
    if float(opts.get("OutputIntervalLength", 1.0)) <= 0:
        _add(problems, path, "OutputIntervalLength", "must be positive", "")
    return None if len(problems) > before else opts


# -- the cross-check band (fmpy.cross_check.validate_signal / validate_result) ----------------------
def band_width(t_ref: np.ndarray, y_ref: np.ndarray, t_start: float, t_stop: float) -> tuple[np.ndarray, np.ndarray,
                                                                                             float]:
    """The reference on the band's grid, and the band's half-width in value (``fmpy.cross_check.validate_signal``):
    10 % of the range, or of the value (0.5 at zero) for an exactly constant signal."""
    t_band = np.linspace(t_start, t_stop, BAND_POINTS)
    keep = np.concatenate(([True], np.diff(t_ref) > 0))
    y_band = np.interp(t_band, t_ref[keep], y_ref[keep])
    lo, hi = float(np.min(y_band)), float(np.max(y_band))
    if lo == hi:
        width = 0.5 if lo == 0 else abs(lo) * BAND_WIDTH
    else:
        width = (hi - lo) * BAND_WIDTH
    return t_band, y_band, width


def band_outliers(t: np.ndarray, y: np.ndarray, t_ref: np.ndarray, y_ref: np.ndarray, t_start: float,
                  t_stop: float) -> np.ndarray:
    """Samples of ``y(t)`` outside the cross-check band around ``y_ref`` (as ``fmpy.cross_check``): ±10 samples of
    the band's 1000-point grid in time, ±:func:`band_width` in value."""
    t_band, y_band, width = band_width(t_ref, y_ref, t_start, t_stop)
    y_min = np.interp(t, t_band, minimum_filter1d(y_band, BAND_WINDOW) - width)
    y_max = np.interp(t, t_band, maximum_filter1d(y_band, BAND_WINDOW) + width)
    outside = (y < y_min) | (y > y_max) | ~np.isfinite(y)  # nhbridge: a NaN is outside too
    return outside & (t >= t_start) & (t <= t_stop)


# -- export ----------------------------------------------------------------------------------------
def reference_step(stop: float) -> float:
    """The output step: ``stop / n`` with the smallest n giving a step of at least 1, 2 or 5 × 10^k ≥ stop/500."""
    raw = stop / REFERENCE_INTERVALS
    exp = math.floor(math.log10(raw))
    nice = next(m * 10.0 ** exp for m in (1, 2, 5, 10) if m * 10.0 ** exp >= raw * (1 - 1e-9))
    return stop / max(1, round(stop / nice))


def _existing_ancestor(path: Path) -> Path:
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_output_dir(path: str | Path, problems: list[Problem], what: str = "output folder") -> None:
    """Problems if ``path`` cannot become a writable folder (checked before any work is done)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        _add(problems, path, "", f"the {what} is an existing file", "choose a folder")
        return
    base = _existing_ancestor(path)
    if not base.is_dir():
        _add(problems, path, "", f"cannot create the {what}: {base} is a file, not a folder",
             "choose a writable output folder")
    elif not os.access(base, os.W_OK | os.X_OK):
        _add(problems, path, "", f"cannot create the {what}: {base} is not writable", "choose a writable output folder")


class _FolderSwap:
    """Folders written completely beside their targets, then renamed into place together.

    A failure before :meth:`commit` removes the staging folders and the parent folders created for them;
    a failure during the commit also restores the folders that were already replaced.
    """

    def __init__(self) -> None:
        self.items: list[tuple[Path, Path]] = []
        self.created: list[Path] = []

    def __enter__(self) -> _FolderSwap:
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if kind is not None:
            self.abort()

    def _mkdirs(self, folder: Path) -> None:
        missing = []
        probe = folder
        while not probe.exists():
            missing.append(probe)
            if probe == probe.parent:
                break
            probe = probe.parent
        if not probe.is_dir():
            raise ExportError(f"{folder}: cannot write here ({probe} is a file, not a folder); choose a writable "
                              "output folder")
        for d in reversed(missing):
            try:
                d.mkdir()
            except FileExistsError:
                continue
            except OSError as exc:
                raise ExportError(f"{d}: cannot create the folder ({exc.strerror or exc}); choose a writable output "
                                  "folder") from exc
            self.created.append(d)

    def stage(self, target: Path) -> Path:
        """A new empty folder beside ``target`` (same file system, so the final rename is atomic)."""
        target = Path(os.path.abspath(target))
        if target.exists() and not target.is_dir():
            raise ExportError(f"{target}: exists and is not a folder; remove it or choose another output folder")
        self._mkdirs(target.parent)
        try:
            staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(staging, 0o777 & ~mask)  # mkdtemp makes 0700; give the folder the usual permissions
        except OSError as exc:
            raise ExportError(f"{target.parent}: cannot write here ({exc.strerror or exc}); choose a writable "
                              "output folder") from exc
        self.items.append((staging, target))
        return staging

    def commit(self) -> list[Path]:
        """Rename every staged folder into place (an existing target is replaced); all or none."""
        done: list[tuple[Path, Path | None]] = []
        try:
            for staging, target in self.items:
                backup = None
                if target.exists():
                    backup = target.with_name(f".{target.name}.old-{uuid.uuid4().hex[:8]}")
                    os.rename(target, backup)
                done.append((target, backup))
                os.rename(staging, target)
        except OSError as exc:
            kept = []
            for target, backup in reversed(done):
                shutil.rmtree(target, ignore_errors=True)  # the new folder (absent when its rename failed)
                if backup is not None:
                    try:
                        os.rename(backup, target)
                    except OSError:
                        kept.append(f"{target} is saved as {backup}")
            self.abort()
            raise ExportError(f"cannot write the cross-check folder ({exc.strerror or exc}); choose a writable "
                              "output folder" + (f" ({'; '.join(kept)})" if kept else "")) from exc
        for _, backup in done:
            if backup is not None:
                shutil.rmtree(backup, ignore_errors=True)
        self.created = []
        return [target for _, target in self.items]

    def abort(self) -> None:
        for staging, _ in self.items:
            shutil.rmtree(staging, ignore_errors=True)
        for d in reversed(self.created):
            try:
                d.rmdir()
            except OSError:
                pass
        self.items, self.created = [], []


def _write(path: Path, data: str | bytes) -> None:
    try:
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8", newline="")
        else:
            path.write_bytes(data)
    except OSError as exc:
        raise ExportError(f"{path}: cannot write the file ({exc.strerror or exc}); choose a writable output "
                          "folder") from exc


def _compiler_version() -> str:
    from ..fmu_export import compiler

    try:
        cc = compiler()
        out = subprocess.run([*cc.split(), "--version"], capture_output=True, text=True, timeout=20)
        return out.stdout.splitlines()[0].strip() if out.returncode == 0 and out.stdout else cc
    except (BridgeError, OSError, subprocess.SubprocessError):
        return "unknown"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _summary(text: str, limit: int = 120) -> str:
    """The first sentence of a description, shortened for a table cell (no ``|``)."""
    text = _one_line(text).replace("|", "/")
    match = re.match(r"(.+?[.!?])\s+(?=[A-Z])", text)
    first = match.group(1) if match else text
    return first if len(first) <= limit else first[:limit - 1].rstrip() + "…"


def _export_readme(system, fmi_version: int, fmi_type: str, step: float, stop: float, names: list[str],
                   constant: list[str], source: Path, compiler: str) -> str:
    model = system.name
    units = {c.name: c.unit for c in system.coordinates}
    units |= {f"der({c.name})": f"{c.unit}/s" for c in system.coordinates if c.unit}
    rows = [f"## {model} FMU", "", "### Model Info", "", f"|Model Name|{model}|", "|-|-|",
            f"|Description|{_summary(system.description) or model}|",
            f"|FMI Version|{fmi_version}.0|", f"|FMI Type|{FMI_TYPE_TITLES[fmi_type]}|", f"|Platform|{PLATFORM}|",
            f"|Compiler|{compiler}|", f"|Generation Tool|{TOOL_NAME} {__version__}|", "",
            "### Model", "", _one_line(system.description) or model, "",
            f"Generated from the nhbridge system file `{source.name}` (SHA-256 `{_sha256(source)[:16]}…`). "
            f"`{model}.fmu` is a source FMU with the {PLATFORM} binary and provides both Model Exchange and "
            "Co-Simulation; the same file is submitted under `me/` and `cs/`. Co-Simulation integrates with an "
            "adaptive Dormand–Prince 5(4) or 8(5,3) method (whichever needs fewer evaluations) at the "
            "importer's tolerance and lands on the communication points.",
            "", "### Reference solution", "",
            f"`{model}_ref.csv`: nhbridge's native simulation: equations of motion by the Lagrange method with "
            f"multipliers, integrated by scipy's DOP853 at RelTol {REFERENCE_RTOL:g} and AbsTol {REFERENCE_ATOL:g}, "
            f"sampled every {step:.6g} s from 0 to {stop:g} s (`{model}_ref.opt`). "
            "Velocities are the FMU variables `der(x)`.", "",
            "| signal | unit |", "|-|-|"]
    rows += [f"| `{n}` | {units.get(n, '') or '–'} |" for n in names]
    if constant:
        rows += ["", f"Left out: {', '.join(f'`{n}`' for n in constant)}, which vary by less than {CONSTANT:g} of "
                 "their value along the reference (e.g. a conserved energy). The cross-check band is "
                 f"{BAND_WIDTH:.0%} of a signal's range, for these integration noise no importer could stay within."]
    if len(names) > RECOMMENDED_SIGNALS:
        rows += ["", f"The reference has {len(names)} signals, more than the {RECOMMENDED_SIGNALS} the rules "
                 "recommend: every coordinate, velocity and output is listed."]
    if system.inputs:
        held = ", ".join(f"`{u.name}` = {u.start:g}{' ' + u.unit if u.unit else ''}" for u in system.inputs)
        rows += ["", f"Inputs (`{model}_in.csv`): {held}, held constant over the run."]
    rows += ["", "### Reproduce", "", "```",
             f"nhbridge crosscheck {source.name} -o DIR --fmi-version {fmi_version} --fmi-type {fmi_type}",
             f"nhbridge crosscheck --check DIR/fmus/{fmi_version}.0/{fmi_type}/{PLATFORM}/{TOOL_NAME}/{__version__}/"
             f"{model}", "```", ""]
    return "\n".join(rows)


def export_crosscheck(system_path: str | Path, out_dir: str | Path, fmi_version: int = 2,
                      fmi_types: Iterable[str] = ("me", "cs")) -> list[Path]:
    """Write the cross-check folders of a system file under ``out_dir/fmus/...``; the model folders written.

    One FMU (Model Exchange and Co-Simulation) is built and put into each requested ``me``/``cs`` folder
    with ``_ref.csv``, ``_ref.opt``, ``_in.csv`` (inputs held at their start values) and ``ReadMe.md``.
    Every folder is written beside its target and renamed into place; an existing one is replaced.
    """
    from ..fmu_export import build_fmu
    from ..methods import derive
    from ..simulate import simulate
    from ..system import load_system
    from .reference import signal_names

    problems: list[Problem] = []
    types = list(dict.fromkeys(fmi_types))
    if fmi_version not in (2, 3):
        problems.append(Problem("--fmi-version", f"FMI version must be 2 or 3, got {fmi_version!r}"))
    wrong = [t for t in types if t not in FMI_TYPES]
    if wrong or not types:
        problems.append(Problem("--fmi-type", f"FMI types must be me and/or cs, got {', '.join(map(str, types))}",
                                "use me, cs or both"))
    check_output_dir(out_dir, problems)
    source = Path(system_path)
    try:
        system = load_system(source)
    except SystemFileError as exc:
        if not problems:
            raise
        raise ValidationError(list(exc.problems) + problems) from exc
    if problems:
        raise ValidationError(problems)

    eom = derive(system, "lagrange")
    stop = float(system.stop_time)
    step = reference_step(stop)
    result = simulate(eom, stop, interval=step, rtol=REFERENCE_RTOL, atol=REFERENCE_ATOL)
    cols = result.columns()
    names = [n for n in signal_names(system) if n in cols]
    bad = [n for n in names if not np.all(np.isfinite(cols[n]))]
    if bad:
        raise SimulationError(f"{source}: the reference simulation produced non-finite values for {', '.join(bad)}")
    constant = [n for n in names if 0 < np.ptp(cols[n]) < CONSTANT * np.abs(cols[n]).max()]
    names = [n for n in names if n not in constant]
    if not names:
        raise ValidationError(f"{source}: every signal of {system.name} is constant up to integration noise; the "
                              "cross-check band (10 % of a signal's range) cannot compare such signals")
    files = {f"{system.name}_ref.csv": csv_text(cols["time"], {n: cols[n] for n in names}),
             f"{system.name}_ref.opt": opt_text(0.0, stop, step, REFERENCE_RTOL, REFERENCE_ATOL, step)}
    if system.inputs:
        files[f"{system.name}_in.csv"] = csv_text(np.array([0.0, stop]),
                                                  {u.name: np.full(2, u.start) for u in system.inputs})
    for name, text in files.items():
        if len(text.encode()) > MAX_CSV_BYTES:
            raise ExportError(f"{name} would be {len(text.encode()) / 1e6:.1f} MB, above the 1 MB limit of the "
                              "FMI Cross-Check rules")
    with tempfile.TemporaryDirectory(prefix="nhbridge-crosscheck-") as tmp:
        fmu = build_fmu(eom, Path(tmp) / f"{system.name}.fmu", fmi_version)
        if fmu.stat().st_size > MAX_FMU_BYTES:
            raise ExportError(f"{fmu.name} is {fmu.stat().st_size / 1e6:.1f} MB, above the 10 MB limit of the "
                              "FMI Cross-Check repository")
        compiler = _compiler_version()
        with _FolderSwap() as swap:
            for fmi_type in types:
                staging = swap.stage(model_folder(out_dir, fmi_version, fmi_type, system.name))
                try:
                    shutil.copyfile(fmu, staging / fmu.name)
                except OSError as exc:
                    raise ExportError(f"{staging}: cannot write the FMU ({exc.strerror or exc})") from exc
                for name, text in files.items():
                    _write(staging / name, text)
                _write(staging / README_NAME, _export_readme(system, fmi_version, fmi_type, step, stop, names,
                                                             constant, source, compiler))
            return swap.commit()


# -- check -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SignalCheck:
    """One signal of ``_ref.csv`` against the result: the cross-check band and nhbridge's tube."""

    signal: str
    metrics: SignalMetrics
    band_outside: int
    samples: int
    band: float = 0.0  # the band's half-width in value

    @property
    def band_fraction(self) -> float:
        return self.band_outside / self.samples if self.samples else 1.0

    @property
    def band_ok(self) -> bool:
        return self.band_fraction <= BAND_OUTLIERS

    @property
    def passed(self) -> bool:
        return self.band_ok and self.metrics.tube_ok


@dataclass
class CrosscheckResult:
    """The verdict on one model folder: ``passed``, the per-signal results, reasons and files written."""

    model: str
    model_dir: Path
    fmi_version: str
    fmi_type: str
    passed: bool = False
    signals: list[SignalCheck] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    results_dir: Path | None = None
    settings: str = ""

    @property
    def status(self) -> str:
        return "passed" if self.passed else "failed"


@dataclass(frozen=True)
class _Plan:
    layout: Layout
    fmu: Path
    md: object
    opts: dict
    reference: CsvData
    inputs: CsvData | None
    target: Path


def _generation_tool(md) -> tuple[str, str]:
    text = (getattr(md, "generationTool", None) or "").strip()
    parts = text.split()
    safe = [re.sub(r"[^A-Za-z0-9._+-]", "_", p) for p in parts]
    if len(safe) >= 2:
        return safe[0], safe[-1]
    return (safe[0], "unknown") if safe else ("unknown", "unknown")


def _plan(model_dir: Path, results_root: str | Path | None, fmi_type: str | None) -> _Plan:
    """Read and check everything in the model folder; ValidationError naming every problem."""
    from .runs import RunFailure, describe_fmu

    problems: list[Problem] = []
    if not model_dir.exists():
        raise ValidationError(Problem("", "no such folder", "give the model folder, e.g. "
                                      "DIR/fmus/2.0/me/linux64/nhbridge/0.1.0/Model", str(model_dir)))
    if not model_dir.is_dir():
        raise ValidationError(Problem("", "not a folder", "give the model folder that holds Model.fmu and "
                                      "Model_ref.csv", str(model_dir)))
    try:
        import fmpy  # noqa: F401
    except ImportError as exc:
        raise ValidationError("checking an FMU needs fmpy: pip install fmpy") from exc
    layout = parse_layout(model_dir)
    model = Path(os.path.abspath(model_dir)).name
    fmu = model_dir / f"{model}.fmu"
    md = None
    if not fmu.is_file():
        others = sorted(p.name for p in model_dir.glob("*.fmu"))
        hint = (f"the rules name the FMU after its folder: rename {others[0]} or the folder" if others else
                "put the FMU into the folder, named after it")
        if (model_dir / f"{model}.nofmu").exists():
            hint = "the exporter submitted a .nofmu file instead of the FMU; there is nothing to simulate"
        _add(problems, fmu, "", "the FMU is missing", hint)
    else:
        try:
            md = describe_fmu(fmu)
        except RunFailure as exc:
            problems.append(Problem("", exc.reason.split(": ", 1)[-1], "replace it with a valid FMU", str(fmu)))
    opts = read_ref_opt(model_dir / f"{model}_ref.opt", problems)
    reference = read_csv_file(model_dir / f"{model}_ref.csv", problems, "the reference _ref.csv")
    in_path = model_dir / f"{model}_in.csv"
    inputs = read_csv_file(in_path, problems, "the input file _in.csv") if in_path.exists() else None
    if reference is not None and not reference.names:
        _add(problems, reference.path, "line 1", "no signal besides the time", "add the variables to compare")
    if reference is not None and opts is not None:
        start, stop = float(opts["StartTime"]), float(opts["StopTime"])
        eps = 1e-9 * max(1.0, abs(stop - start))
        if reference.time[0] > start + eps or reference.time[-1] < stop - eps:
            _add(problems, reference.path, "", f"the reference covers {reference.time[0]:g} to {reference.time[-1]:g} "
                 f"s, not StartTime {start:g} to StopTime {stop:g} s of _ref.opt",
                 "the rules ask the reference to contain StartTime and StopTime")
    version = layout.fmi_version if layout else None
    if md is not None:
        if version is not None and md.fmiVersion != version:
            problems.append(Problem("", f"an FMI {md.fmiVersion} FMU in an FMI {version} folder",
                                    "put it under the folder of its FMI version", str(fmu)))
        version = version or md.fmiVersion
    kinds = {"me": getattr(md, "modelExchange", None), "cs": getattr(md, "coSimulation", None)}
    if fmi_type is not None and fmi_type not in FMI_TYPES:
        problems.append(Problem("--fmi-type", f"checking takes one FMI type, me or cs, got {fmi_type!r}",
                                "the folder's place in fmus/<version>/<me|cs>/... decides it"))
        fmi_type = None
    if layout is not None:
        if fmi_type is not None and fmi_type != layout.fmi_type:
            problems.append(Problem("--fmi-type", f"the folder is a {layout.fmi_type} folder, not {fmi_type}",
                                    "leave out --fmi-type", str(model_dir)))
        fmi_type = layout.fmi_type
    elif fmi_type is None and md is not None:
        offered = [k for k, v in kinds.items() if v is not None]
        if len(offered) == 1:
            fmi_type = offered[0]
        else:
            problems.append(Problem("", "the folder is not in a cross-check tree (fmus/<FMI version>/<me|cs>/"
                                    "<platform>/<tool>/<version>/<model>) and the FMU offers both interfaces",
                                    "pass --fmi-type me or --fmi-type cs", str(model_dir)))
    if md is not None and fmi_type in FMI_TYPES and kinds[fmi_type] is None:
        where = f"the folder is a {fmi_type} folder" if layout is not None else f"--fmi-type {fmi_type} asks for it"
        problems.append(Problem("", f"the FMU has no {FMI_TYPES[fmi_type]} interface, but {where}",
                                "check it as the interface it has", str(fmu)))
    if results_root is None and layout is None:
        problems.append(Problem("-o", "the folder is not in a cross-check tree, so the results have no default place",
                                "give -o DIR: the results go to DIR/results/...", str(model_dir)))
    if results_root is not None:
        check_output_dir(results_root, problems, "results folder")
    if problems:
        raise ValidationError(problems)
    if layout is None:
        tool, tool_version = _generation_tool(md)
        layout = Layout(Path(os.path.abspath(results_root)), version, fmi_type, PLATFORM, tool, tool_version, model)
    root = Path(results_root) if results_root is not None else layout.root
    target = results_folder(root, layout.fmi_version, layout.fmi_type, layout.platform, layout.tool,
                            layout.tool_version, model)
    return _Plan(layout, fmu, md, opts, reference, inputs, target)


def _simulate_fmu_child(conn, path: str, kind: str, start: float, stop: float, step: float, interval: float,
                        rtol: float | None, names: list[str], inputs) -> None:
    """fmpy's ``simulate_fmu`` in the child process of :func:`bridge.validation.runs.isolated`."""
    import traceback

    try:
        import fmpy

        kw = dict(fmi_type=kind, start_time=start, stop_time=stop, output_interval=interval, output=names,
                  relative_tolerance=rtol, input=inputs, validate=False)
        if kind == "ModelExchange":
            kw["solver"] = "CVode"
        else:
            kw["step_size"] = step
        result = fmpy.simulate_fmu(path, **kw)
        conn.send(("ok", {n: np.asarray(result[n], dtype=float) for n in result.dtype.names}))
    except BaseException as exc:  # report everything to the parent
        lines = str(exc).strip().splitlines()
        conn.send(("error", f"{type(exc).__name__}: {lines[-1] if lines else ''}", traceback.format_exc(limit=3)))
    finally:
        conn.close()


def _check_readme(res: CrosscheckResult, plan: _Plan, how: str, tube: float, time_tol: float, fmpy_version: str,
                  wrote_out: bool) -> str:
    lay = plan.layout
    rows = [f"## {res.model}: FMI Cross-Check result ({res.status})", "",
            f"|Model Name|{res.model}|", "|-|-|", f"|FMI Version|{res.fmi_version}|",
            f"|FMI Type|{FMI_TYPE_TITLES[res.fmi_type]}|", f"|Platform|{lay.platform}|",
            f"|Importing Tool|{TOOL_NAME} {__version__} (simulation by FMPy {fmpy_version})|",
            f"|Exporting Tool|{lay.tool} {lay.tool_version}|", f"|Result|{res.status}|", "",
            "### How the FMU was simulated", "", how, "",
            "### Comparison", "",
            f"Every signal of `{res.model}_ref.csv` against the result; `passed` needs both tests for every signal:",
            "",
            f"1. the cross-check band of `fmpy.cross_check.validate_result`: the reference on {BAND_POINTS} points, "
            f"±{BAND_WINDOW // 2} samples in time, ±{BAND_WIDTH:.0%} of its range in value; at most "
            f"{BAND_OUTLIERS:.0%} of the samples outside;",
            f"2. nhbridge's csv-compare tube: ±{tube:g} of the signal's range in value, ±{time_tol:g} s in time; "
            "no sample outside.", "",
            "| signal | max abs error | max error / range | at t (s) | outside band | outside tube | verdict |",
            "|-|-|-|-|-|-|-|"]
    for s in res.signals:
        m = s.metrics
        rows.append(f"| `{s.signal}` | {m.max_abs:.3g} | {m.max_rel:.3g} | {m.worst_time:.4g} | "
                    f"{s.band_outside}/{s.samples} | {m.tube_violations} | {'passed' if s.passed else 'failed'} |")
    if res.reasons:
        rows += ["", "### Reasons", ""] + [f"- {r}" for r in res.reasons]
    if res.notes:
        rows += ["", "### Notes", ""] + [f"- {n}" for n in res.notes]
    rows += ["", "### Files", ""]
    if wrote_out:
        rows.append(f"- `{res.model}_out.csv`: the simulated values of the reference's signals.")
    rows.append(f"- `{res.status}`: the result (FMI Cross-Check rules §9.2.3).")
    if parse_layout(res.model_dir) is not None:
        where = Path(os.path.abspath(res.model_dir)).relative_to(plan.layout.root)
        rows += ["", "### Reproduce (in the folder that holds `fmus/`)", "", "```",
                 f"nhbridge crosscheck --check {where}", "```", ""]
    else:
        rows += ["", "### Reproduce", "", "```", f"nhbridge crosscheck --check {res.model_dir} --fmi-type "
                 f"{res.fmi_type} -o {plan.layout.root}", "```", ""]
    return "\n".join(rows)


def check_crosscheck(model_dir: str | Path, results_dir: str | Path | None = None, fmi_type: str | None = None,
                     tube: float = DEFAULT_TUBE, time_tolerance: float = DEFAULT_TIME_TOLERANCE) -> CrosscheckResult:
    """Simulate the FMU of a cross-check model folder with fmpy and compare it with ``_ref.csv``.

    ``results_dir`` is the root that receives ``results/...`` (rules §9.2.4); by default the root of the
    tree the model folder is in. Writes ``{Model}_out.csv``, ``passed`` or ``failed`` and ``ReadMe.md``
    there (a folder written beside its target and renamed into place). Bad input (missing or malformed
    files, an FMU that does not load or lacks the folder's interface, an unwritable output) raises
    :class:`ValidationError` naming every problem, and nothing is written. ME runs with CVode at the
    ``_ref.opt`` RelTol (not tighter than 1e-10), CS at communication step StepSize (or the output
    interval when StepSize is 0), with the ``_in.csv`` inputs (linear interpolation) when present.
    """
    import fmpy

    from .runs import RunFailure, isolated

    model_dir = Path(model_dir)
    plan = _plan(model_dir, results_dir, fmi_type)
    lay, opts, ref = plan.layout, plan.opts, plan.reference
    start, stop = float(opts["StartTime"]), float(opts["StopTime"])
    step = float(opts["StepSize"])
    # output interval: OutputIntervalLength, else StepSize, else the reference's own spacing
    interval = float(opts.get("OutputIntervalLength", 0.0)) or step or float(np.median(np.diff(ref.time)))
    interval = interval if interval > 0 else (stop - start) / REFERENCE_INTERVALS
    step = step or interval  # StepSize 0 (variable step): CS communicates at the output interval
    rtol_opt = float(opts["RelTol"])
    rtol = max(rtol_opt, ME_RTOL_FLOOR) if rtol_opt > 0 else None  # RelTol 0: the FMU's default tolerance
    time_tol = time_tolerance * (stop - start)
    res = CrosscheckResult(lay.model, model_dir, lay.fmi_version, lay.fmi_type, results_dir=plan.target,
                           settings=f"band ±{BAND_WIDTH:g}·range (fmpy), tube ±{tube:g}·range, ±{time_tol:g} s")
    res.notes += ref.notes + (plan.inputs.notes if plan.inputs else [])

    variables = {v.name: v for v in plan.md.modelVariables}
    present = [n for n in ref.names if n in variables]
    missing = [n for n in ref.names if n not in variables]
    if missing:
        res.reasons.append(f"the FMU lacks the variable(s) {', '.join(missing)} of {ref.path.name}")
    fmu_inputs = [n for n, v in variables.items() if v.causality == "input"]
    input_array = None
    if plan.inputs is not None:
        wrong = [n for n in plan.inputs.names if n not in fmu_inputs]
        if wrong:
            res.reasons.append(f"{plan.inputs.path.name} names {', '.join(wrong)}, which the FMU does not have as "
                               f"input(s)")
        used = [n for n in plan.inputs.names if n in fmu_inputs]
        unset = [n for n in fmu_inputs if n not in used]
        if unset:
            res.notes.append(f"input(s) {', '.join(unset)} not in {plan.inputs.path.name}: held at their start values")
        input_array = plan.inputs.structured(used) if used else None
    elif fmu_inputs:
        res.notes.append(f"the FMU has input(s) {', '.join(fmu_inputs)} but the folder has no _in.csv: held at their "
                         "start values")
    from fmpy.validation import validate_fmu

    try:
        found = validate_fmu(str(plan.fmu))
    except Exception as exc:  # fmpy raises plain exceptions for broken XML
        found = [str(exc)]
    if found:
        res.notes.append(f"fmpy.validation.validate_fmu reports {len(found)} problem(s): "
                         + "; ".join(p.splitlines()[0] for p in found[:3]))

    kind = FMI_TYPES[lay.fmi_type]
    if kind == "ModelExchange":
        tol = "the FMU's default tolerance (RelTol 0 in `_ref.opt`)" if rtol is None else \
            f"relative tolerance {rtol:g} (RelTol {rtol_opt:g} of `_ref.opt`, not tighter than {ME_RTOL_FLOOR:g})"
        how = f"FMPy `simulate_fmu`, Model Exchange, CVode at {tol}, output every {interval:.6g} s"
    else:
        tol = "its default tolerance" if rtol is None else f"tolerance {rtol:g}"
        how = (f"FMPy `simulate_fmu`, Co-Simulation at communication step {step:.6g} s, {tol} passed to the FMU, "
               f"output every {interval:.6g} s")
    how += f", from {start:g} to {stop:g} s"
    how += (f", inputs from `{plan.inputs.path.name}` (linear interpolation)." if input_array is not None
            else ", no inputs." if not fmu_inputs else ", inputs at their start values.")
    how += " The FMU runs in a child process, so a crash fails the check instead of stopping it."

    data = None
    if present and not res.reasons:
        try:
            message = isolated(_simulate_fmu_child, str(plan.fmu), kind, start, stop, step, interval, rtol, present,
                               input_array)
        except RunFailure as exc:
            message = ("error", exc.reason)
        if message[0] == "ok":
            data = message[1]
        else:
            res.reasons.append(f"the simulation failed: {message[1]}")
    elif not present:
        res.reasons.append("no signal of the reference can be compared")

    if data is not None:
        t = data["time"]
        if t.size < 2 or t[0] > start + 1e-9 * (stop - start) or t[-1] < stop - 1e-9 * (stop - start):
            res.reasons.append(f"the result covers {t[0]:g} to {t[-1]:g} s, not {start:g} to {stop:g} s")
        in_span = (ref.time >= start) & (ref.time <= stop)
        for name in present:
            if name not in data:
                res.reasons.append(f"{name}: no values in the result")
                continue
            metrics = compare(name, ref.time[in_span], ref.columns[name][in_span], t, data[name], tube, time_tol)
            outside = band_outliers(t, data[name], ref.time, ref.columns[name], start, stop)
            width = band_width(ref.time, ref.columns[name], start, stop)[2]
            check = SignalCheck(name, metrics, int(outside.sum()), int(t.size), width)
            res.signals.append(check)
            if not check.band_ok:
                res.reasons.append(f"{name}: {check.band_outside} of {check.samples} samples "
                                   f"({check.band_fraction:.0%}) outside the cross-check band (±{width:.3g}: "
                                   f"{BAND_WIDTH:.0%} of the reference's range), more than {BAND_OUTLIERS:.0%}")
            if not metrics.tube_ok:
                res.reasons.append(f"{name}: {metrics.tube_violations} sample(s) outside the tube (±{tube:g} of the "
                                   f"range, ±{time_tol:g} s); max error {metrics.max_rel:.3g} of the range "
                                   f"(abs {metrics.max_abs:.3g}) at t = {metrics.worst_time:.4g} s")
    res.passed = not res.reasons and bool(res.signals)

    out_name = f"{lay.model}_out.csv"
    out_text = None
    if data is not None:
        out_text = csv_text(data["time"], {n: data[n] for n in present if n in data})
        if len(out_text.encode()) > MAX_CSV_BYTES:
            res.notes.append(f"{out_name} is larger than the 1 MB the rules allow")
    readme = _check_readme(res, plan, how, tube, time_tol, fmpy.__version__, out_text is not None)
    with _FolderSwap() as swap:
        staging = swap.stage(plan.target)
        if out_text is not None:
            _write(staging / out_name, out_text)
        _write(staging / res.status, "")
        _write(staging / README_NAME, readme)
        target = swap.commit()[0]
    res.files = sorted(target / p.name for p in target.iterdir())
    return res


# -- command line ----------------------------------------------------------------------------------
def add_parser(subparsers):
    """Add ``nhbridge crosscheck`` to the CLI's subparsers (sets ``func=cmd_crosscheck``)."""
    p = subparsers.add_parser(
        "crosscheck", help="write an FMI Cross-Check folder, or check an FMU in one",
        description="With a system file: build its FMU and write the FMI Cross-Check layout "
                    "DIR/fmus/<FMI version>/<me|cs>/linux64/nhbridge/<version>/<Model>/ (Model.fmu, Model_ref.csv, "
                    "Model_ref.opt, Model_in.csv when the system has inputs, ReadMe.md). With a model folder (or "
                    "--check): simulate its FMU with fmpy, compare it with Model_ref.csv and write Model_out.csv, "
                    "passed or failed and ReadMe.md to results/<FMI version>/<me|cs>/<platform>/nhbridge/<version>/"
                    "<exporting tool>/<version>/<Model>/. Exit status: 0 passed (or exported), 1 failed, 2 bad input.")
    p.add_argument("path", metavar="FILE.toml|MODEL_DIR",
                   help="a system file to export, or a model folder to check")
    p.add_argument("--check", action="store_true", help="check the model folder (implied when PATH is a folder)")
    p.add_argument("-o", "--output", default=None, metavar="DIR",
                   help="export: the folder that receives fmus/... (required); check: the folder that receives "
                        "results/... (default: the tree the model folder is in)")
    p.add_argument("--fmi-version", type=int, choices=[2, 3], default=None,
                   help="export: FMI version of the FMU (default 2)")
    p.add_argument("--fmi-type", choices=["me", "cs", "both"], default=None,
                   help="export: the folders to write (default both); check: only for a model folder outside a "
                        "cross-check tree whose FMU offers both")
    p.set_defaults(func=cmd_crosscheck)
    return p


def cmd_crosscheck(args) -> int:
    path = Path(args.path)
    if args.check or path.is_dir():
        if args.fmi_version is not None:
            raise ValidationError(Problem("--fmi-version", "applies to export only",
                                          "a model folder's place in fmus/<FMI version>/... gives its version"))
        if args.fmi_type == "both":
            raise ValidationError(Problem("--fmi-type", "a check takes one FMI type", "give me or cs"))
        if path.exists() and not path.is_dir():
            raise ValidationError(Problem("", "--check takes a model folder, not a file",
                                          "give the folder that holds Model.fmu and Model_ref.csv", str(path)))
        res = check_crosscheck(path, args.output, args.fmi_type)
        print(f"{res.model} (FMI {res.fmi_version} {res.fmi_type}): {res.status.upper()}, {len(res.signals)} "
              f"signal(s) compared ({res.settings})")
        for reason in res.reasons:
            print(f"  {reason}")
        print(f"  wrote {res.results_dir} ({', '.join(p.name for p in res.files)})")
        return 0 if res.passed else 1
    if not path.exists():
        raise ValidationError(Problem("", "no such file or folder", "give a system file (.toml) to export or a model "
                                      "folder to check", str(path)))
    if args.output is None:
        raise ValidationError(Problem("-o", "exporting needs an output folder", "add -o DIR", str(path)))
    types = ("me", "cs") if args.fmi_type in (None, "both") else (args.fmi_type,)
    folders = export_crosscheck(path, args.output, args.fmi_version or 2, types)
    for folder in folders:
        print(f"wrote {folder} ({', '.join(sorted(p.name for p in folder.iterdir()))})")
    return 0


if __name__ == "__main__":  # pragma: no cover - convenience: python -m bridge.validation.crosscheck
    import argparse

    parser = argparse.ArgumentParser(prog="nhbridge")
    add_parser(parser.add_subparsers(dest="command", required=True))
    arguments = parser.parse_args()
    try:
        sys.exit(arguments.func(arguments))
    except BridgeError as error:
        print(f"nhbridge: error:\n{error}", file=sys.stderr)
        sys.exit(2)
