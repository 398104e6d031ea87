"""``nhbridge controller``: a state-feedback controller designed on the linear model, written as an FMU.

The system is linearized as ``nhbridge linearize`` does (same point options); the gain comes from LQR weights
(``--lqr weights.toml``) or is given (``--gain K.csv|K.npy``). The report gives ``K`` and the open- and
closed-loop eigenvalues (a law that does not stabilise is reported, not refused). Exit codes: 0 done; 1 a
derivation stopped (timeout); 2 bad input (a gain of the wrong shape, unknown names, weights that are not
(semi-)definite, a point that is not steady).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from ..commandline import Command, Progress, add_progress_options, add_set_option, budget, names, positive, set_values
from ..errors import BridgeError


def add_parser(subparsers) -> None:
    """Add ``nhbridge controller`` to the CLI's subparsers."""
    from ..derivation.methods import METHODS

    co = subparsers.add_parser(
        "controller", help="design state feedback u = u0 - K (x - x0) on the linear model (LQR or a given K) and "
                           "write it as an FMU",
        description="Linearize a system about a steady point (as nhbridge linearize does), design the state feedback "
        "u = u0 - K (x - x0) on its minimal states by LQR (--lqr weights.toml: [Q] and [R] weights by name) or take "
        "K from a file (--gain K.csv or K.npy: one row per input, one column per state), report the open- and "
        "closed-loop eigenvalues, and write the law as an FMI 2/3 FMU (Model Exchange and Co-Simulation) whose "
        "inputs are the plant's outputs that measure the states (an [outputs] entry equal to the state, e.g. "
        "roll = \"phi\"; else the state's name, der(q) as der_q) and whose outputs are the plant's inputs, so a "
        "co-simulation scenario connects it to the plant's FMU by name. Needs python-control "
        "(pip install \"nhbridge[control]\").")
    co.add_argument("file", metavar="FILE", help="system file (.toml) of the plant, with [inputs] for its actuators")
    design = co.add_mutually_exclusive_group(required=True)
    design.add_argument("--lqr", default=None, metavar="WEIGHTS.toml",
                        help="LQR weights: [Q] per state and [R] per input (or full matrices Q = [[...]])")
    design.add_argument("--gain", default=None, metavar="K.csv|K.npy",
                        help="the gain K: one row per input, one column per state (a CSV header row may name "
                             "the states)")
    co.add_argument("--method", "-m", choices=list(METHODS), default="lagrange",
                    help="derivation method whose equations are linearized (default: lagrange)")
    co.add_argument("--independent", type=names, default=None, metavar="X,Y",
                    help="independent velocities of the split (default: the file's, else chosen at the point)")
    co.add_argument("--cyclic", default=None, metavar="X,Y|none",
                    help="the cyclic coordinates to drop (default: detected); 'none' keeps every coordinate")
    co.add_argument("-o", "--output", default=None, metavar="FMU",
                    help="write the controller FMU here (default: <system>_controller.fmu)")
    co.add_argument("--fmi-version", type=int, choices=[2, 3], default=2, help="FMI version: 2 or 3 (default: 2)")
    from ..fmu.platforms import add_platform_option

    add_platform_option(co, "the controller FMU")
    co.add_argument("--json", default=None, metavar="FILE",
                    help="write K, the operating point and the eigenvalues as JSON")
    co.add_argument("--timeout", type=positive, default=600.0, metavar="SECONDS",
                    help="stop a derivation that takes longer (exit code 1; default 600)")
    add_set_option(co)
    add_progress_options(co)


def run(args: argparse.Namespace) -> int:
    """Run the command on the parsed arguments; exit code 0, or an error (see the module's docstring)."""
    from ..atomic import write_text
    from ..derivation.methods import METHODS
    from ..fmu.build import toolchains
    from ..linearization.linearize import Linearizer
    from ..linearization.point import operating_point
    from ..model.loader import load_system
    from .feedback import (
        StateFeedback,
        check_against_system,
        controller_fmu,
        lqr,
        measured_names,
        read_gain,
        read_weights,
    )

    values, progress = set_values(args), Progress(args)

    for opt in ("output", "json"):
        path = getattr(args, opt)
        if path and os.path.isdir(path):
            raise BridgeError(f"--{'o' if opt == 'output' else opt} {path}: is a folder; give a file name")
    toolchains(args.platform)  # a missing (cross) compiler: said before anything is derived or written
    system = load_system(args.file, values or None)
    if not system.inputs:
        raise BridgeError(f"{args.file}: {system.name} has no [inputs]: a controller needs an actuator input "
                          "acting in [forces] (e.g. a steering torque)")
    check_against_system(system, args.lqr, args.gain)  # a typo is reported before the derivation, not after
    cyclic = None if args.cyclic is None else (() if args.cyclic.strip().lower() == "none" else names(args.cyclic))
    with (progress.step(f"deriving {system.name} ({args.method})"),
          budget(args, f"the derivation of {system.name} by {args.method}")):
        eom = METHODS.get_method(args.method).derive(system, args.independent or system.independent)
    with progress.step("linearizing"):
        plant = Linearizer(eom, args.independent).at(operating_point(system, values), cyclic=cyclic)
    measured = measured_names(system, plant)
    if args.lqr:
        Q, R = read_weights(args.lqr, plant)
        law = lqr(plant, Q, R, measured)
    else:
        law = StateFeedback(plant, read_gain(args.gain, plant), measured)
    sys.stdout.write(law.report())
    out = args.output or f"{system.name}_controller.fmu"
    with progress.step(f"building {out}"):
        controller_fmu(law, out, fmi_version=f"{args.fmi_version}.0", platforms=args.platform)
    print(f"wrote {out} (FMI {args.fmi_version}.0; inputs {', '.join(law.measured)}; outputs "
          f"{', '.join(plant.inputs)})")
    if args.json:
        eig = law.eigenvalues()
        data = {"system": system.name, "design": law.design, "states": list(plant.states),
                "measured": list(law.measured), "inputs": list(plant.inputs), "K": law.K.tolist(),
                "x0": np.asarray(plant.x0, dtype=float).tolist(), "u0": np.asarray(plant.u0, dtype=float).tolist(),
                "open_loop": [[float(z.real), float(z.imag)] for z in np.linalg.eigvals(plant.A)],
                "closed_loop": [[float(z.real), float(z.imag)] for z in eig], "stable": law.is_stable()}
        write_text(args.json, json.dumps(data, indent=2) + "\n")
    return 0


COMMANDS = (Command("controller", add_parser, run),)
