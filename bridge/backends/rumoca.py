"""Rumoca on the exported Modelica.

The model is compiled from its text alone, and simulated in the form the export chose (falling back to the
other forms where Rumoca's integrator fails). Rumoca runs in :mod:`bridge.tools.rumoca`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..derivation.eom import EquationsOfMotion
from ..errors import ValidationError
from ..modelica.export import model_source
from ..modelica.forms import (
    FORMS,
    applicable_forms,
    choose_form,
    in_form,
    regular_horizon,
    require_expressible,
    target_form,
)
from ..modelica.ports import library_files
from ..modelica.repartition import repartition_source
from ..tools.rumoca import RumocaSimulationFailed, require_rumoca, simulate_text


@dataclass(frozen=True)
class RumocaRun:
    """The exported model as Rumoca compiled and simulated it."""

    result: Any            # rumoca.Result: time and every variable by name
    structure: Any         # rumoca's structure(): balance, states, algebraic variables
    form: str              # the form (bridge.modelica.forms.FORMS) of the text that simulated
    seconds: float
    failures: tuple[str, ...] = ()  # the forms tried before, with Rumoca's message


def simulate_rumoca(eom: EquationsOfMotion, level: str, stop_time: float, dt: float, rtol: float) -> RumocaRun:
    """Compile the exported model with Rumoca and simulate it from 0 to ``stop_time`` (output step ``dt``).

    The model as exported (the form :func:`bridge.modelica.forms.choose_form` picks) is tried first; where
    Rumoca's integrator fails on it, the same equations with the accelerations as variables, then (a split with
    a coupled block) with the split as normal equations. A reduced method whose split turns singular before
    ``stop_time`` is tried first in the form ``repartition`` (:func:`bridge.modelica.forms.target_form`).
    Inputs keep their start values (Rumoca 0.9 has no inputs= yet).
    """
    rumoca = require_rumoca()
    require_expressible(eom, level, "rumoca")
    name = eom.system.name
    automatic = level in ("auto", "index1")
    chosen = choose_form(eom).form if automatic else "implicit"
    others = [f for f in ("variables", "normal") if f != chosen and f in applicable_forms(eom)]
    first = []  # a reduced method whose split turns singular before stop_time: the text that changes it
    if automatic and target_form(eom, "rumoca") == "repartition" and regular_horizon(eom, stop_time) < stop_time:
        first = ["repartition"]
    failures = []
    for form in [*first, chosen, *others]:
        if form == "repartition":  # a reduced method: the text that changes its split (bridge.modelica.repartition)
            text = repartition_source(eom)
        elif form == chosen:  # the text as exported (its Documentation says why this form)
            text = model_source(eom, level, accelerations="auto")
        else:
            text = model_source(in_form(eom, form), FORMS[form].level if automatic else level,
                                accelerations=FORMS[form].accelerations)
        try:
            result, structure, seconds = simulate_text(rumoca, text, name, library_files(eom), stop_time, dt, rtol)
        except RumocaSimulationFailed as exc:
            failures.append(f"{form} form: {exc}")
            continue
        return RumocaRun(result, structure, form, seconds, tuple(failures))
    raise ValidationError(f"Rumoca could not simulate {name}: " + "; ".join(failures))


__all__ = ["RumocaRun", "simulate_rumoca"]
