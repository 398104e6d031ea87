"""What a linearization reports: modes (eigenvalues, eigenvectors, damping, frequency), JSON, CSV, text, plot.

For an eigenvalue ``lambda = sigma + i omega_d``: the natural frequency is ``omega_n = |lambda|`` (rad/s) and the
damping ratio ``zeta = -sigma / |lambda|`` (1 for a stable real mode, negative when the mode grows; undefined for
``lambda = 0``). Eigenvectors are scaled so that their largest component is 1.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import write_text
from .model import LinearModel

TOL = 1e-9  # relative to max(1, |lambda|): a real part within it is neutral (this report and the sweeps)


def sorted_modes(lin: LinearModel) -> tuple[np.ndarray, np.ndarray]:
    """Return the eigenvalues (sorted by real part, then imaginary part) and the matching eigenvectors (columns)."""
    if lin.A.shape[0] == 0:
        return np.zeros(0, dtype=complex), np.zeros((0, 0), dtype=complex)
    w, v = np.linalg.eig(lin.A)
    order = np.lexsort((w.imag, w.real))
    w, v = w[order], v[:, order]
    for k in range(v.shape[1]):
        big = v[np.argmax(np.abs(v[:, k])), k]
        if big != 0:
            v[:, k] = v[:, k] / big
    return w, v


def round_off(values) -> float:
    """Return the rounding noise of a set of values.

    ``TOL * max(1, max |value|)`` (the stability verdict's tolerance); a value within it is printed as 0.
    """
    return TOL * max(1.0, float(np.abs(np.asarray(values, dtype=complex)).max(initial=0.0)))


def damping(w: np.ndarray) -> list[float | None]:
    """Return the damping ratio ``-Re(lambda)/|lambda|``; None for an eigenvalue zero to rounding."""
    tiny = round_off(w)
    return [(-float(x.real) / abs(x)) + 0.0 if abs(x) > tiny else None for x in w]


def _matrix(M: np.ndarray) -> list[list[float]]:
    return [[float(x) for x in row] for row in np.atleast_2d(M)] if M.size else []


def record(lin: LinearModel) -> dict[str, Any]:
    """Return the JSON record of one linear model."""
    w, v = sorted_modes(lin)
    return {
        "system": lin.system, "method": lin.method,
        "states": list(lin.states), "state_units": list(lin.state_units),
        "inputs": list(lin.inputs), "input_units": list(lin.input_units),
        "outputs": list(lin.outputs), "output_units": list(lin.output_units),
        "A": _matrix(lin.A), "B": [[float(x) for x in row] for row in lin.B],
        "C": [[float(x) for x in row] for row in lin.C], "D": [[float(x) for x in row] for row in lin.D],
        "x0": [float(x) for x in lin.x0], "u0": [float(x) for x in lin.u0], "y0": [float(x) for x in lin.y0],
        "eigenvalues": [[float(x.real), float(x.imag)] for x in w],
        "damping_ratio": damping(w),
        "natural_frequency": [float(abs(x)) for x in w],
        "eigenvectors": [[[float(c.real), float(c.imag)] for c in v[:, k]] for k in range(v.shape[1])],
        "independent": list(lin.independent), "dropped": list(lin.dropped), "conserved": list(lin.conserved),
        "point": {k: float(x) for k, x in lin.point.items()},
    }


def write_json(path: str | Path, data: dict[str, Any]) -> Path:
    """Write ``data`` as indented JSON (no NaN; numpy values as numbers), atomically.

    Parameters
    ----------
    path : str or pathlib.Path
        The file to write.
    data : dict
        The record.

    Returns
    -------
    pathlib.Path
        The written file.
    """
    return write_text(path, json.dumps(data, indent=1, allow_nan=False, default=_none) + "\n")


def _none(x):
    return None


def _fmt(x: float) -> str:
    return repr(float(x))


def point_csv(lin: LinearModel) -> str:
    """Return a CSV with one row per eigenvalue: real, imag, damping ratio, natural frequency."""
    w, _ = sorted_modes(lin)
    lines = ["mode,real,imag,damping_ratio,natural_frequency_rad_s"]
    for k, (x, z) in enumerate(zip(w, damping(w))):
        lines.append(f"{k + 1},{_fmt(x.real)},{_fmt(x.imag)},{'' if z is None else _fmt(z)},{_fmt(abs(x))}")
    return "\n".join(lines) + "\n"


def sweep_csv(name: str, values: list[float], models: list[LinearModel]) -> str:
    """Return a CSV with one row per swept value: the eigenvalues' real and imaginary parts."""
    size = max((m.A.shape[0] for m in models), default=0)
    head = [name] + [f"real_{k + 1}" for k in range(size)] + [f"imag_{k + 1}" for k in range(size)] + ["max_real"]
    lines = [",".join(head)]
    for s, lin in zip(values, models):
        w, _ = sorted_modes(lin)
        re = [_fmt(x.real) for x in w] + [""] * (size - len(w))
        im = [_fmt(x.imag) for x in w] + [""] * (size - len(w))
        top = _fmt(w.real.max()) if len(w) else ""
        lines.append(",".join([_fmt(s), *re, *im, top]))
    return "\n".join(lines) + "\n"


def _table(M: np.ndarray, rows: tuple[str, ...], cols: tuple[str, ...]) -> list[str]:
    if M.size == 0:
        return ["  (empty)"]
    width = max(12, *(len(c) + 1 for c in cols))
    lead = max(len(r) for r in rows)
    tol = round_off(M)
    out = [" " * (lead + 2) + "".join(f"{c:>{width}}" for c in cols)]
    for r, row in zip(rows, M):
        out.append(f"  {r:<{lead}}" + "".join(f"{_noise_free(x, tol):>{width}.6g}" for x in row))
    return out


def text_report(lin: LinearModel) -> str:
    """Return a plain-text summary: the point, the state, A, B, C, D and the modes."""
    lines = [f"{lin.system} linearized ({lin.method}) about the point"]
    point_tol = round_off(list(lin.point.values()))
    show = [f"{k} = {_noise_free(v, point_tol):.6g}" for k, v in lin.point.items()
            if k.startswith("der(") or k in lin.independent or k in lin.states]
    lines.append("  " + ", ".join(show[:16]) + (", ..." if len(show) > 16 else ""))
    lines.append(f"states: {', '.join(f'{s} [{u}]' if u else s for s, u in zip(lin.states, lin.state_units))}")
    if lin.dropped:
        lines.append(f"cyclic coordinates (dropped): {', '.join(lin.dropped)}")
    if lin.conserved:
        lines.append(f"conserved speeds (decoupled, neutral; dropped): {', '.join(lin.conserved)}")
    lines.append("A =")
    lines += _table(lin.A, lin.states, lin.states)
    if lin.inputs:
        lines.append("B =")
        lines += _table(lin.B, lin.states, lin.inputs)
    if lin.outputs:
        lines.append("C =")
        lines += _table(lin.C, lin.outputs, lin.states)
        if lin.inputs:
            lines.append("D =")
            lines += _table(lin.D, lin.outputs, lin.inputs)
    w, _ = sorted_modes(lin)
    lines.append("eigenvalues (1/s):        damping ratio   natural frequency (rad/s)")
    tol = round_off(w)  # round-off of the eigenvalues: 0 within it
    for x, z in zip(w, damping(w)):
        zt = "      -" if z is None else f"{_noise_free(z if abs(z) * abs(x) > tol else 0.0, 0.0):>14.6g}"
        lines.append(f"  {_noise_free(x.real, tol):>+.10f} {_noise_free(x.imag, tol):>+.10f}i {zt} "
                     f"{_noise_free(abs(x), tol):>14.6g}")
    g = float(w.real.max()) if len(w) else 0.0
    lines.append(f"the point is {stability_class(w)}" + (
        f" (largest real part {g:.6g}{', zero within round-off' if abs(g) <= tol else ''})" if len(w) else ""))
    return "\n".join(lines) + "\n"


def _noise_free(value: float, tol: float) -> float:
    """Return 0 for a value within ``tol`` of 0 (never -0), else the value."""
    return 0.0 if abs(value) <= tol else float(value)


def stability_class(w: np.ndarray) -> str:
    """Classify a linear model's stability as the sweep does (tolerance ``1e-9 max(1, |lambda|)``).

    Asymptotically stable, marginally stable (a neutral mode, e.g. a conservative point) or unstable.
    """
    if not len(w):
        return "without states"
    g, tol = float(w.real.max()), round_off(w)
    return "asymptotically stable" if g < -tol else "marginally stable (a neutral mode)" if g <= tol else "unstable"


def plot_sweep(path: str | Path, name: str, values: list[float], models: list[LinearModel], stability: dict,
               title: str = "", unit: str = "") -> Path:
    """Plot the eigenvalues' real and imaginary parts against the swept value, stable ranges shaded."""
    from ..atomic import atomic_file
    from ..simulation.plot import pyplot

    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(7.5, 6.5))
    xs, re, im = [], [], []
    for s, lin in zip(values, models):
        w, _ = sorted_modes(lin)
        xs += [s] * len(w)
        re += list(w.real)
        im += list(w.imag)
    ax1.plot(xs, re, ".", ms=3, color="C0")
    ax2.plot(xs, im, ".", ms=3, color="C1")
    for a, b in stability.get("stable", []):
        for ax in (ax1, ax2):
            ax.axvspan(a, b, color="C2", alpha=0.12, lw=0)
    for k, c in enumerate(stability.get("crossings", [])):
        for ax in (ax1, ax2):
            ax.axvline(c["value"], color="k", lw=0.7, ls="--")
        label = "complex pair" if c["kind"].startswith("oscillatory") else "real"
        ax1.annotate(f"{label}\n{c['value']:.6g}", (c["value"], 1), xycoords=("data", "axes fraction"),
                     textcoords="offset points", xytext=(3, -26 - 24 * (k % 2)), fontsize=8)
    ax1.axhline(0, color="k", lw=0.6)
    ax2.axhline(0, color="k", lw=0.6)
    ax1.set_ylabel("real part (1/s)")
    ax2.set_ylabel("imaginary part (rad/s)")
    ax2.set_xlabel(f"{name} [{unit}]" if unit else name)
    if re and math.isfinite(min(re)) and math.isfinite(max(re)):
        span = max(max(re) - min(re), 1e-9)
        ax1.set_ylim(min(re) - 0.05 * span, max(re) + 0.05 * span)
    fig.suptitle(title or "eigenvalues against " + name)
    for ax in (ax1, ax2):
        ax.grid(True, lw=0.3)
    fig.tight_layout()
    path = Path(path)
    with atomic_file(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip(".").lower(), dpi=120)
    plt.close(fig)
    return path
