"""``nhbridge crosscheck``: export a system file's cross-check folders, or check a model folder."""

from __future__ import annotations

from pathlib import Path

from ...errors import Problem, ValidationError
from .check import check_crosscheck
from .export import export_crosscheck


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
                   help="export: the folder that receives fmus/... (default: the current directory); check: the folder "
                        "that receives results/... (default: the tree the model folder is in)")
    p.add_argument("--fmi-version", type=int, choices=[2, 3], default=None,
                   help="FMI version of the FMU: 2 or 3 (default: 2; export only)")
    p.add_argument("--fmi-type", choices=["me", "cs", "both"], default=None,
                   help="export: the folders to write (default both); check: only for a model folder outside a "
                        "cross-check tree whose FMU offers both")
    from ...fmu.platforms import add_platform_option

    add_platform_option(p, "the exported FMU (export only; the host's always; the folder layout names the "
                           "host's, where the reference was checked)")
    p.set_defaults(func=cmd_crosscheck)
    return p


def cmd_crosscheck(args) -> int:
    """Run ``nhbridge crosscheck``: check a model folder, or export a system file's Cross-Check folders.

    A folder (or ``--check``) is checked against its reference with the FMU's binary of the host; a system
    file is exported to one folder per FMI type. Returns the exit code: 0, or 1 for a failed check.
    """
    path = Path(args.path)
    if args.check or path.is_dir():
        if args.fmi_version is not None:
            raise ValidationError(Problem("--fmi-version", "applies to export only",
                                          "a model folder's place in fmus/<FMI version>/... gives its version"))
        if args.fmi_type == "both":
            raise ValidationError(Problem("--fmi-type", "a check takes one FMI type", "give me or cs"))
        if getattr(args, "platform", None):
            raise ValidationError(Problem("--platform", "applies to export only",
                                          "a check runs the FMU's binary of the host"))
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
    types = ("me", "cs") if args.fmi_type in (None, "both") else (args.fmi_type,)
    folders = export_crosscheck(path, args.output or ".", args.fmi_version or 2, types,
                                platforms=getattr(args, "platform", None))
    for folder in folders:
        print(f"wrote {folder} ({', '.join(sorted(p.name for p in folder.iterdir()))})")
    return 0
