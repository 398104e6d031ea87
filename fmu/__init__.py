"""The nhbridge FMU C runtime (FMI 2.0/3.0), shipped inside the wheel as ``bridge.fmu.runtime`` package data.

The lists below are the one place that names the runtime's files: the FMU builder
(:mod:`bridge.fmu.build`), the runtime's own test build (``fmu/tests``) and the file map of
``fmu/README.md`` follow them.
"""

from __future__ import annotations

#: C files of the core, compiled into every FMU beside the generated ``model.c`` and the FMI layer
CORE_SOURCES = ("nhb_linalg.c", "nhb_instance.c", "nhb_switched.c", "nhb_start.c", "nhb_variables.c",
                "nhb_model_exchange.c", "nhb_rk.c", "nhb_cosim.c", "nhb_state.c", "nhb_split.c", "nhb_jacobian.c")

#: C files of the FMI layer of each FMI version
FMI_SOURCES = {2: ("fmi2_runtime.c",), 3: ("fmi3_runtime.c", "fmi3_clocks.c")}

#: fixed model functions for a generated ``model.c`` that holds only data: the linear FMU's (``nhbridge linearize
#: --fmu``), compiled before the core
LINEAR_SOURCES = ("nhb_linear.c",)

#: C files off the hot path of a run (set-up, start values, variable access, FMU states, switching logic, the FMI
#: API glue): compiled with -O1, which takes about half of -O2's compile time; the files a step runs through
#: (linear algebra, Runge-Kutta, Co-Simulation, Model Exchange, re-partitioning, Jacobian) keep -O2
COLD_SOURCES = ("nhb_instance.c", "nhb_switched.c", "nhb_start.c", "nhb_variables.c", "nhb_state.c",
                "fmi2_runtime.c", "fmi3_runtime.c", "fmi3_clocks.c")

#: headers the runtime's C files include (the FMI headers come from ``include/fmi<version>/``)
HEADERS = ("nhb_model.h", "nhb_core.h", "nhb_internal.h", "nhb_split.h", "nhb_jacobian.h")


def runtime_sources(fmi_version: int) -> tuple[str, ...]:
    """Return the runtime's C files of an FMU of ``fmi_version`` (2 or 3), in compile order."""
    return CORE_SOURCES + FMI_SOURCES[fmi_version]


if __name__ == "__main__":  # for shell scripts: python3 fmu/__init__.py sources <2|3> | headers
    import sys

    print(" ".join(runtime_sources(int(sys.argv[2])) if sys.argv[1] == "sources" else HEADERS))
