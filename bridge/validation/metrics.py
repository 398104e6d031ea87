"""Comparison metrics of one signal against its reference.

With the reference ``y_ref(t_i)`` on a uniform grid and the run ``y(t_i)`` (interpolated there when
its own grid differs), ``scale = range(y_ref)``; a signal that varies by less than ``CONSTANT`` of its
magnitude (a first integral, a constant rate) is measured against ``max|y_ref|`` instead, and an
identically zero one against 1 (in its own units):

* ``max_abs = max |y - y_ref|``, ``max_rel = max_abs / scale``, ``rms = sqrt(mean (y - y_ref)^2)``;
* a tube test in the style of Modelica's csv-compare: around every reference point a rectangle of
  half-width ``time_tolerance`` in time and ``tube * scale`` in value; the run passes when every
  sample lies between the lower and upper envelopes of those rectangles.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from scipy.ndimage import maximum_filter1d, minimum_filter1d

CONSTANT = 1e-3


def signal_scale(reference: np.ndarray) -> float:
    """Return the scale relative errors of a signal are measured against.

    The range of the reference where it is not nearly constant, else its peak magnitude, else 1 (an identically zero
    signal's errors are absolute).

    Parameters
    ----------
    reference : numpy.ndarray
        The reference signal.

    Returns
    -------
    float
        The scale, positive.
    """
    span = float(np.ptp(reference)) if reference.size else 0.0
    peak = float(np.abs(reference).max()) if reference.size else 0.0
    if span >= CONSTANT * peak and span > 0:
        return span
    return peak if peak > 0 else 1.0  # identically zero: errors are measured in the signal's own units


@dataclass(frozen=True)
class SignalMetrics:
    """The comparison of one signal with its reference: errors, scale and tube violations."""

    signal: str
    max_abs: float
    max_rel: float
    rms: float
    scale: float
    worst_time: float
    tube_violations: int
    tube_ok: bool

    def passed(self, tolerance: float) -> bool:
        """Return whether the signal stays in the tube and its relative error is within ``tolerance``.

        Parameters
        ----------
        tolerance : float
            The largest allowed relative error.

        Returns
        -------
        bool
            True when the signal passes.
        """
        return self.tube_ok and self.max_rel <= tolerance

    def as_dict(self) -> dict:
        """Return the metrics as a dict (for the JSON report)."""
        return asdict(self)


def tube(time: np.ndarray, reference: np.ndarray, width: float, time_tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper envelopes of the csv-compare tube on the reference grid."""
    if time.size > 1:
        dt = float(np.median(np.diff(time)))
        half = int(np.floor(time_tolerance / dt + 1e-9)) if dt > 0 else 0
    else:
        half = 0
    size = 2 * half + 1
    lower = minimum_filter1d(reference, size, mode="nearest") - width
    upper = maximum_filter1d(reference, size, mode="nearest") + width
    return lower, upper


def compare(signal: str, time: np.ndarray, reference: np.ndarray, run_time: np.ndarray, run: np.ndarray,
            tube_width: float, time_tolerance: float) -> SignalMetrics:
    """Return the metrics of ``run`` (sampled at ``run_time``) against ``reference`` (at ``time``)."""
    values = run if (run_time.shape == time.shape and np.allclose(run_time, time, rtol=0, atol=1e-9)) \
        else np.interp(time, run_time, run)
    scale = signal_scale(reference)
    err = values - reference
    finite = np.isfinite(err)
    if not finite.all():
        k = int(np.argmin(finite))
        return SignalMetrics(signal, float("inf"), float("inf"), float("inf"), scale, float(time[k]),
                             int((~finite).sum()), False)
    k = int(np.argmax(np.abs(err)))
    max_abs = float(abs(err[k]))
    lower, upper = tube(time, reference, tube_width * scale, time_tolerance)
    violations = int(((values < lower) | (values > upper)).sum())
    return SignalMetrics(signal, max_abs, max_abs / scale, float(np.sqrt(np.mean(err ** 2))), scale,
                         float(time[k]), violations, violations == 0)
