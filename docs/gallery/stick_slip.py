"""Gallery: the stick–slip oscillator, a mass on a moving belt with Coulomb friction.

A mass ``m`` on a belt moving at ``v_belt``, held by a spring ``k``: in stick it rides with the belt until the
spring force reaches the static limit ``mu_s m g``; in slip it oscillates about ``x_k = mu_k m g / k`` until its
velocity equals the belt's again. The native simulation locates every switch as an event.
"""

from __future__ import annotations

import math
from pathlib import Path

if __package__ in (None, ""):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
from gallery import EXAMPLES, main, pyplot, save, table, write_page

NAME = "stick_slip"
SYSTEM = EXAMPLES / "nonsmooth" / "belt_friction.toml"


def build(out: Path) -> dict:
    """Simulate 10 s, draw the phase portrait and the friction force, write the page."""
    import bridge

    system = bridge.load_system(SYSTEM)
    # output every 5 ms: 400 samples per slip oscillation (2 s) draw it smoothly; a switched run steps at most one
    # interval, and the switches are events, located to ~1e-14 s whatever the interval
    result = bridge.simulate(bridge.derive(system, "lagrange"), stop_time=10.0, interval=0.005)
    p = {par.name: par.value for par in system.parameters}
    belt = system.friction[0]
    x, v = result["x"], result["der(x)"]
    switches = [(e.time, e.before, e.after) for e in result.events]
    stick_starts = [t for t, _, after in switches if after == "stick"]
    slip_starts = [t for t, before, after in switches if before == "stick"]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(x, v, color="tab:blue", lw=1.2)
    ax.axhline(p["v_belt"], color="tab:gray", ls=":", lw=0.8, label="belt speed (stick)")
    ax.set(xlabel="position x (m)", ylabel="velocity der(x) (m/s)", title="Stick–slip limit cycle")
    ax.legend(loc="lower left")
    save(fig, out / NAME / "phase.png")
    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    ax.plot(result.time, x, color="tab:blue", lw=1.2)
    for t in stick_starts:
        ax.axvline(t, color="tab:green", lw=0.6)
    for t in slip_starts:
        ax.axvline(t, color="tab:red", lw=0.6)
    ax.set(xlabel="time t (s)", ylabel="x (m)", title="Position; switches to stick (green) and slip (red)")
    save(fig, out / NAME / "timeline.png")
    summary = {"stick_starts": stick_starts, "slip_starts": slip_starts, "parameters": p,
               "friction": {"mu_static": float(belt.mu_static), "mu_kinetic": float(belt.mu_kinetic)}}
    omega = math.sqrt(p["k"] / p["m"])
    rows = [[f"{a:.6f}", f"{b:.6f}", f"{b - a:.6f}"] for a, b in zip(slip_starts, stick_starts, strict=False)]
    text = f"""# Stick–slip: a mass on a belt with Coulomb friction

`examples/nonsmooth/belt_friction.toml` is the classic stick–slip oscillator: a mass of {p['m']:g} kg on a belt
moving at {p['v_belt']:g} m/s, held to a wall by a spring of {p['k']:g} N/m, with static and kinetic friction
coefficients 0.4 and 0.3. The friction force is an effort fixed by the stick/slip state; every switch is located
as an event of the native simulation:

```bash
nhbridge simulate examples/nonsmooth/belt_friction.toml --stop-time 10 -o belt.csv --plot belt.png
```

In stick the mass rides with the belt until the spring force reaches the static limit; in slip it swings
harmonically (angular frequency √(k/m) = {omega:.4f} rad/s) about the kinetic equilibrium until its velocity
equals the belt's again. After the first stick phase the motion is a limit cycle:

![Phase portrait](stick_slip/phase.png)

![Position and switching times](stick_slip/timeline.png)

{table(["slip starts (s)", "stick starts (s)", "slip lasts (s)"], rows)}

Each slip phase lasts (π + 2β)/ω with tan β = (v_belt/ω)/((μ_s − μ_k) m g/k), and each later stick phase
2 (μ_s − μ_k) m g/(k v_belt): `tests/test_gallery.py` checks the located switching times against these
closed forms.
"""
    write_page(out, NAME, text, summary)
    return summary


if __name__ == "__main__":
    raise SystemExit(main(build, NAME))
