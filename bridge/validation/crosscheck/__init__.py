"""FMI Cross-Check folders: export a system's FMU with its reference, and check an FMU against a reference.

Follows the *FMI Cross-Check Rules*, version 4.1 (``FMI-CROSS-CHECK-RULES.md`` and ``README.md`` of
https://github.com/modelica/fmi-cross-check), and the repository's validator
``fmpy.cross_check.validate_vendor_repo``:

* :mod:`.layout`: the folders ``fmus/{FMI_Version}/{FMI_Type}/{Platform}/{Tool_Name}/{Tool_Version}/{Model_Name}/``
  (§9.1.5) and ``results/.../{Importing_Tool}/{Version}/{Exporting_Tool}/{Version}/{Model_Name}/`` (§9.2.4);
* :mod:`.files`: ``_ref.opt`` (§9.1.4) and the CSV files (Appendix B), written and read;
* :mod:`.output`: output-folder checks; folders written beside their targets and renamed into place;
* :mod:`.band`: the cross-check band of ``fmpy.cross_check.validate_result``;
* :mod:`.export`: :func:`export_crosscheck`, the FMU, ``_ref.csv``, ``_ref.opt``, ``_in.csv`` and ReadMe;
* :mod:`.plan`, :mod:`.check`, :mod:`.result`: :func:`check_crosscheck`, which passes a signal only when it is
  within both the band (at most 10 % of the samples outside ±10 % of the range) and nhbridge's csv-compare tube
  (no sample outside ±0.002 of the range, ±1e-3 of the time span);
* :mod:`.command`: ``nhbridge crosscheck``.
"""

from .band import BAND_OUTLIERS, BAND_POINTS, BAND_WIDTH, BAND_WINDOW, band_outliers, band_width
from .check import ME_RTOL_FLOOR, check_crosscheck
from .command import add_parser, cmd_crosscheck
from .export import MAX_FMU_BYTES, RECOMMENDED_SIGNALS, REFERENCE_ATOL, REFERENCE_RTOL, export_crosscheck
from .files import MAX_CSV_BYTES, REQUIRED_OPTIONS, CsvData, csv_text, opt_text, read_csv_file, read_ref_opt
from .layout import FMI_TYPES, PLATFORM, README_NAME, TOOL_NAME, Layout, model_folder, parse_layout, results_folder
from .result import CrosscheckResult, SignalCheck

__all__ = ["BAND_OUTLIERS", "BAND_POINTS", "BAND_WIDTH", "BAND_WINDOW", "FMI_TYPES", "MAX_CSV_BYTES", "MAX_FMU_BYTES",
           "ME_RTOL_FLOOR", "PLATFORM", "README_NAME", "RECOMMENDED_SIGNALS", "REFERENCE_ATOL", "REFERENCE_RTOL",
           "REQUIRED_OPTIONS", "TOOL_NAME", "CrosscheckResult", "CsvData", "Layout", "SignalCheck", "add_parser",
           "band_outliers", "band_width", "check_crosscheck", "cmd_crosscheck", "csv_text", "export_crosscheck",
           "model_folder", "opt_text", "parse_layout", "read_csv_file", "read_ref_opt", "results_folder"]
