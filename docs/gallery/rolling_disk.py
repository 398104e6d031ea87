"""Gallery: a thin disk rolling without slipping, started leaning.

The contact point's track on the ground, the lean and the energy of ``examples/rolling_disk.toml`` started at a
lean of 0.15 rad while rolling at 2.4 m/s, by Lagrange's equations with multipliers and by Maggi's equations.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
from gallery import EXAMPLES, main, pyplot, save, table, write_page

NAME = "rolling_disk"
SYSTEM = EXAMPLES / "rolling_disk.toml"
START = {"theta": 0.15, "der(psi)": 1.0}
STOP = 6.0


def energy(system, result) -> np.ndarray:
    """T + V of the system file along a result (the file's own expressions, evaluated with sympy)."""
    import sympy as sp

    from bridge import symbols

    names = [c.name for c in system.coordinates]
    args = [symbols.q(n) for n in names] + [symbols.qd(n) for n in names]
    values = {p.symbol: p.value for p in system.parameters}
    f = sp.lambdify(args, (system.kinetic + system.potential).subs(values), "numpy")
    return np.asarray(f(*[result[n] for n in names], *[result[f"der({n})"] for n in names]), dtype=float)


def build(out: Path) -> dict:
    """Simulate by lagrange and maggi, draw the track and the lean, write the page."""
    import bridge

    system = bridge.load_system(SYSTEM).with_values(START)
    runs = {m: bridge.simulate(bridge.derive(system, m), stop_time=STOP, interval=0.01) for m in ("lagrange", "maggi")}
    lag, mag = runs["lagrange"], runs["maggi"]
    E = energy(system, lag)
    deviation = max(float(np.max(np.abs(lag[c] - mag[c]))) for c in ("x", "y", "psi", "theta", "phi"))
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.plot(lag["x"], lag["y"], color="tab:blue", lw=1.4, label="contact point (lagrange)")
    ax.plot(mag["x"][::25], mag["y"][::25], "o", ms=3, color="tab:orange", label="maggi, every 0.25 s")
    ax.set(xlabel="x (m)", ylabel="y (m)", title="Track of the contact point", aspect="equal")
    ax.legend(loc="best")
    save(fig, out / NAME / "track.png")
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    ax.plot(lag.time, lag["theta"], color="tab:blue", lw=1.2)
    ax.set(xlabel="time t (s)", ylabel="lean theta (rad)", title="Lean of the disk")
    save(fig, out / NAME / "lean.png")
    summary = {"energy_relative_drift": float(np.ptp(E) / abs(E[0])), "lagrange_vs_maggi": deviation,
               "final": {c: float(lag[c][-1]) for c in ("x", "y", "psi", "theta")}}
    text = f"""# A rolling disk

`examples/rolling_disk.toml` is a thin uniform disk rolling without slipping on a horizontal plane: five
coordinates (contact point x, y, heading psi, lean theta, spin phi) and two nonholonomic constraints, three
degrees of freedom. Started leaning by 0.15 rad while rolling at 2.4 m/s and turning at 1 rad/s, it wobbles
and curves:

```bash
nhbridge simulate examples/rolling_disk.toml --set theta=0.15 --set "der(psi)=1" --stop-time 6 -o disk.csv
nhbridge simulate examples/rolling_disk.toml --set theta=0.15 --set "der(psi)=1" --method maggi --stop-time 6
```

![Track of the contact point](rolling_disk/track.png)

![Lean against time](rolling_disk/lean.png)

{table(["check", "value"], [["relative change of T + V over the run", f"{summary['energy_relative_drift']:.1e}"],
                            ["largest difference lagrange − maggi (coordinates)", f"{deviation:.1e}"]])}

Rolling without slipping does no work, so the energy is conserved; Lagrange's equations with multipliers
(the full coordinates) and Maggi's (the three independent speeds) are two derivations that agree along the
whole run.
"""
    write_page(out, NAME, text, summary)
    return summary


if __name__ == "__main__":
    raise SystemExit(main(build, NAME))
