"""Controllers designed on a linear model: state feedback ``u = u0 - K (x - x0)``, by LQR or a given gain.

:class:`StateFeedback` holds the law with the linear model it was designed on; :func:`lqr` computes it with
python-control; :func:`controller_fmu` writes it as an FMI 2/3 FMU on the fixed C runtime whose inputs are the
measured states and outputs the plant's inputs, so a co-simulation scenario connects it to the plant's FMU by
name; :func:`closed_loop_system` closes the loop on the nonlinear system itself for native reference runs.
"""

from .feedback import (
    StateFeedback,
    closed_loop_system,
    controller_fmu,
    lqr,
    measured_names,
    read_gain,
    read_weights,
)

__all__ = ["StateFeedback", "closed_loop_system", "controller_fmu", "lqr", "measured_names", "read_gain",
           "read_weights"]
