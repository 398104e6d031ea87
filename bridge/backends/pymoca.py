"""pymoca on the exported Modelica of a switched model, its documented limitations named.

pymoca runs in :func:`bridge.tools.pymoca.simulate_pymoca`.
"""

from __future__ import annotations

from ..derivation.eom import EquationsOfMotion
from ..errors import ValidationError
from ..model.efforts import Diode
from ..modelica.ports import library_files
from ..modelica.switched import elements, pymoca_limitation
from ..tools.pymoca import DocumentedLimitation, PymocaRun, simulate_pymoca

PYMOCA_NO_EVENTS = ("pymoca 0.12 makes no events of relations: the diode's switch {what} (a relation) flips inside "
                    "IDAS's steps, whose Newton iteration fails at the kink "
                    "(docs/compiler-defects/DiodePymocaNoEvents.mo)")


def simulate_switched_pymoca(eom: EquationsOfMotion, source: str, stop: float, dt: float, rtol: float) -> PymocaRun:
    """Simulate the model text ``source`` of a switched model with :func:`~bridge.tools.pymoca.simulate_pymoca`.

    A model with a mode state raises :class:`~bridge.tools.pymoca.DocumentedLimitation` (no ``when``/``pre`` in
    pymoca), and a failure of a model with diodes names the documented defect (relations make no events).
    """
    system = eom.system
    limitation = pymoca_limitation(system)
    if limitation:
        raise DocumentedLimitation(f"pymoca cannot compile {system.name}: {limitation}")
    try:
        return simulate_pymoca(source, system.name, stop, dt, rtol, library_files(eom))
    except ValidationError as exc:
        diodes = [f"nhb_{d.name}_off = nhb_{d.name}_s < 0" for d in elements(system) if isinstance(d, Diode)]
        if not diodes:
            raise
        raise ValidationError(f"{exc}; {PYMOCA_NO_EVENTS.format(what=', '.join(diodes))}") from exc


__all__ = ["PYMOCA_NO_EVENTS", "simulate_switched_pymoca"]
