"""The cross-check band of the repository's validator (``fmpy.cross_check.validate_signal`` / ``validate_result``).

The reference is resampled on 1000 points from StartTime to StopTime and widened by ±10 samples in time and
±10 % of its range in value; a result fails when more than 10 % of its samples lie outside. For a signal that is
constant up to integration noise (a conserved energy) the band is 10 % of that noise, and no importer could pass.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import maximum_filter1d, minimum_filter1d

BAND_POINTS, BAND_WINDOW, BAND_WIDTH, BAND_OUTLIERS = 1000, 21, 0.1, 0.1  # fmpy.cross_check.validate_signal


def band_width(t_ref: np.ndarray, y_ref: np.ndarray, t_start: float, t_stop: float) -> tuple[np.ndarray, np.ndarray,
                                                                                             float]:
    """Return the reference on the band's grid and the band's half-width in value.

    As ``fmpy.cross_check.validate_signal``: 10 % of the range, or of the value (0.5 at zero) for an exactly constant
    signal.
    """
    t_band = np.linspace(t_start, t_stop, BAND_POINTS)
    keep = np.concatenate(([True], np.diff(t_ref) > 0))
    y_band = np.interp(t_band, t_ref[keep], y_ref[keep])
    lo, hi = float(np.min(y_band)), float(np.max(y_band))
    if lo == hi:  # an exactly constant signal
        return t_band, y_band, 0.5 if lo == 0 else abs(lo) * BAND_WIDTH
    return t_band, y_band, (hi - lo) * BAND_WIDTH


def band_outliers(t: np.ndarray, y: np.ndarray, t_ref: np.ndarray, y_ref: np.ndarray, t_start: float,
                  t_stop: float) -> np.ndarray:
    """Return the samples of ``y(t)`` outside the cross-check band around ``y_ref`` (as ``fmpy.cross_check``).

    ±10 samples of the band's 1000-point grid in time, ±:func:`band_width` in value.
    """
    t_band, y_band, width = band_width(t_ref, y_ref, t_start, t_stop)
    y_min = np.interp(t, t_band, minimum_filter1d(y_band, BAND_WINDOW) - width)
    y_max = np.interp(t, t_band, maximum_filter1d(y_band, BAND_WINDOW) + width)
    outside = (y < y_min) | (y > y_max) | ~np.isfinite(y)  # nhbridge: a NaN is outside too
    return outside & (t >= t_start) & (t <= t_stop)
