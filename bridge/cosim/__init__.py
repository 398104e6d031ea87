"""Co-simulation of nhbridge FMUs with other FMUs: scenario files, a master algorithm, SSP in and out.

From the repository's root::

    from bridge.cosim import prepare
    with prepare("examples/cosim/hydropulsator_motors.toml") as cosim:   # or an .ssp package
        result = cosim.run(step=0.005, algorithm="gauss-seidel")          # a CosimResult
        result.write_csv("cosim.csv")
"""

from .checks import Plan, check_scenario
from .errors import CosimError, CosimInterrupted, CosimRunError
from .results import CosimResult
from .scenario import ComponentSpec, Connection, MasterSettings, Scenario, load_scenario, parse_scenario
from .session import Cosimulation, open_scenario, prepare
from .ssp import read_ssp, write_ssp

__all__ = ["ComponentSpec", "Connection", "CosimError", "CosimInterrupted", "CosimResult", "CosimRunError",
           "Cosimulation", "MasterSettings", "Plan", "Scenario", "check_scenario", "load_scenario", "open_scenario",
           "parse_scenario", "prepare", "read_ssp", "write_ssp"]
