"""Gallery: the Whipple bicycle's eigenvalues against speed, and its self-stable band.

The benchmark bicycle of Meijaard, Papadopoulos, Ruina and Schwab (2007) linearized about upright straight-ahead
motion at each speed in minimal coordinates (roll, steer and their rates), along the sweep that
``nhbridge linearize --sweep`` runs (each speed projected onto the constraints, the Jacobians compiled once); the
weave and capsize speeds that bound the self-stable band are found by root finding on the largest real part.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
from gallery import EXAMPLES, main, pyplot, save, table, write_page

NAME = "bicycle_eigenvalues"
SYSTEM = EXAMPLES / "control" / "bicycle_steered.toml"
SPEEDS = np.linspace(0.0, 10.0, 51)


def build(out: Path) -> dict:
    """Eigenvalues on a grid of speeds, the two stability boundaries, the picture and the page."""
    from scipy.optimize import brentq

    import bridge
    from bridge.linearization.linearize import Linearizer
    from bridge.linearization.sweep import Sweep, SweepSpec

    system = bridge.load_system(SYSTEM)
    lin = Linearizer(bridge.derive(system, "lagrange"))
    r_R = next(p.value for p in system.parameters if p.name == "r_R")
    sweep = Sweep(lin, system, SweepSpec("der(theta_R)", 0.0, -SPEEDS[-1] / r_R, len(SPEEDS)))

    def eigenvalues(v: float) -> np.ndarray:
        model = sweep.model_at(-v / r_R)
        return np.sort_complex(np.linalg.eigvals(model.A))

    grid = np.array([eigenvalues(v) for v in SPEEDS])
    largest = grid.real.max(axis=1)
    stable = SPEEDS[largest < 0]
    step = SPEEDS[1] - SPEEDS[0]  # the boundaries lie within one grid step outside the stable grid points
    weave = brentq(lambda v: eigenvalues(v).real.max(), stable[0] - step, stable[0], xtol=1e-12)
    capsize = brentq(lambda v: eigenvalues(v).real.max(), stable[-1], stable[-1] + step, xtol=1e-12)
    at = {v: eigenvalues(v) for v in (0.0, 5.0)}
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.axvspan(weave, capsize, color="tab:green", alpha=0.15, label=f"self-stable: {weave:.3f} to {capsize:.3f} m/s")
    ax.plot(SPEEDS, grid.real, ".", ms=2.5, color="tab:blue")
    ax.plot(SPEEDS, np.abs(grid.imag), ".", ms=2.0, color="tab:gray")
    ax.plot([], [], ".", color="tab:blue", label="Re(λ)")
    ax.plot([], [], ".", color="tab:gray", label="|Im(λ)|")
    ax.axhline(0.0, color="black", lw=0.6)
    ax.set(xlabel="forward speed v (m/s)", ylabel="eigenvalue (1/s)", ylim=(-10, 10),
           title="Whipple bicycle: eigenvalues of the upright motion")
    ax.legend(loc="lower left")
    save(fig, out / NAME / "eigenvalues.png")
    summary = {"weave_speed": weave, "capsize_speed": capsize,
               "eigenvalues_at_0": [[z.real, z.imag] for z in at[0.0]],
               "eigenvalues_at_5": [[z.real, z.imag] for z in at[5.0]]}
    fmt = lambda zs: ", ".join(f"{z.real:.6f}{z.imag:+.6f}j" if abs(z.imag) > 1e-12 else f"{z.real:.6f}" for z in zs)  # noqa: E731
    text = f"""# The bicycle's eigenvalues against speed

`examples/engineering/bicycle.toml` (and its variant with a steer torque, `examples/control/bicycle_steered.toml`)
is the Whipple bicycle of the benchmark of Meijaard, Papadopoulos, Ruina and Schwab (2007): four rigid bodies,
eight coordinates, one holonomic and four nonholonomic constraints, three degrees of freedom. Linearized about
upright straight-ahead motion at each forward speed, in minimal coordinates (roll, steer and their rates):

```bash
nhbridge linearize examples/engineering/bicycle.toml --sweep "der(theta_R)=0:-33.3:101"
```

![Eigenvalues against speed](bicycle_eigenvalues/eigenvalues.png)

Between the weave speed, where the oscillating weave mode becomes stable, and the capsize speed, where the real
capsize mode becomes unstable, the uncontrolled bicycle balances itself:

{table(["quantity", "nhbridge", "published (Meijaard et al. 2007)"],
       [["weave speed (m/s)", f"{weave:.10f}", "4.2923825363"],
        ["capsize speed (m/s)", f"{capsize:.10f}", "6.0242620154"],
        ["eigenvalues at 0 m/s", fmt(at[0.0]), "±3.1316432479, ±5.5309437177"],
        ["eigenvalues at 5 m/s", fmt(at[5.0]), "−0.7753418822 ± 4.4648677138j, −0.3228664290, −14.0783896928"]])}

`tests/test_gallery.py` checks the two speeds against the published values to 1e-7.
"""
    write_page(out, NAME, text, summary)
    return summary


if __name__ == "__main__":
    raise SystemExit(main(build, NAME))
