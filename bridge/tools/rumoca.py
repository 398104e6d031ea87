"""Rumoca on the exported Modelica.

The model is compiled from its text alone, and simulated in the form the export chose (falling back to the
other forms where Rumoca's integrator fails).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..derivation.eom import EquationsOfMotion
from ..errors import ExportError, ValidationError
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

RUMOCA_MISSING = 'Rumoca is not installed; pip install --only-binary rumoca "rumoca>=0.9.9,<0.10"'


@dataclass(frozen=True)
class RumocaRun:
    """The exported model as Rumoca compiled and simulated it."""

    result: Any            # rumoca.Result: time and every variable by name
    structure: Any         # rumoca's structure(): balance, states, algebraic variables
    form: str              # the form (bridge.modelica.forms.FORMS) of the text that simulated
    seconds: float
    failures: tuple[str, ...] = ()  # the forms tried before, with Rumoca's message


def load_alone(rumoca, source: str, name: str, library: Mapping[str, str] | None = None):
    """Rumoca's model ``name`` compiled from ``source`` alone, wherever the process runs.

    Given a file name that exists in the working directory, Rumoca 0.9 also loads the other ``.mo`` files of
    that folder ('Duplicate class ... with non-identical definition' when one declares the same class); the
    source is named as a file in an empty temporary folder instead, with no source roots.
    """
    with tempfile.TemporaryDirectory(prefix="nhbridge-rumoca-") as tmp:
        roots = []
        if library:  # the other files the model needs (the connectors of ports): a source root beside it
            roots = [str(Path(tmp) / "library")]
            for relative, text in library.items():
                (Path(roots[0]) / relative).parent.mkdir(parents=True, exist_ok=True)
                (Path(roots[0]) / relative).write_text(text, encoding="utf-8")
        return rumoca.loads(source, model=name, filename=str(Path(tmp) / f"{name}.mo"), roots=roots)


def simulate_rumoca(eom: EquationsOfMotion, level: str, stop_time: float, dt: float, rtol: float) -> RumocaRun:
    """Compile the exported model with Rumoca and simulate it from 0 to ``stop_time`` (output step ``dt``).

    The model as exported (the form :func:`bridge.modelica.forms.choose_form` picks) is tried first; where
    Rumoca's integrator fails on it, the same equations with the accelerations as variables, then (a split with
    a coupled block) with the split as normal equations. A reduced method whose split turns singular before
    ``stop_time`` is tried first in the form ``repartition`` (:func:`bridge.modelica.forms.target_form`).
    Inputs keep their start values (Rumoca 0.9 has no inputs= yet).
    """
    try:
        import rumoca
    except ImportError as exc:
        raise ExportError(RUMOCA_MISSING) from exc

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
            model = load_alone(rumoca, text, name, library_files(eom))
            structure = model.structure()
        except rumoca.RumocaError as exc:
            raise ValidationError(f"Rumoca rejected the exported model {name}: {exc}") from exc
        start = time.perf_counter()
        try:
            result = model.simulate((0.0, stop_time), config=rumoca.SimConfig(rtol=rtol, atol=rtol * 1e-2, dt=dt))
        except rumoca.RumocaError as exc:
            failures.append(f"{form} form: {exc}")
            continue
        return RumocaRun(result, structure, form, time.perf_counter() - start, tuple(failures))
    raise ValidationError(f"Rumoca could not simulate {name}: " + "; ".join(failures))
