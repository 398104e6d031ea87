"""Gallery: a half-wave rectifier feeding a DC motor, its diode switching located as events."""

from __future__ import annotations

from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
from gallery import EXAMPLES, main, pyplot, save, table, write_page

NAME = "rectifier"
SYSTEM = EXAMPLES / "nonsmooth" / "rectifier_motor.toml"
STOP = 0.1


def build(out: Path) -> dict:
    """Simulate 0.1 s (five periods of the 50 Hz source), draw current, source and speed, write the page."""
    import bridge

    system = bridge.load_system(SYSTEM)
    # output every 50 us: 400 samples per period of the source resolve its switching (a switched run steps at
    # most one interval; the switches themselves are located as events, to ~1e-14 s, whatever the interval)
    result = bridge.simulate(bridge.derive(system, "lagrange"), stop_time=STOP, interval=5e-5)
    p = {par.name: par.value for par in system.parameters}
    t, i, speed = result.time, result["current"], result["speed"]
    source = p["U0"] * np.sin(p["w"] * t)
    on = [e.time for e in result.events if e.after == "conducting"]
    off = [e.time for e in result.events if e.after == "blocking"]
    plt = pyplot()
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    a1.plot(t, source, color="tab:gray", lw=1.0, label="source U0 sin(ωt) (V)")
    a1.plot(t, 10 * i, color="tab:blue", lw=1.3, label="armature current × 10 (A)")
    for x in on:
        a1.axvline(x, color="tab:green", lw=0.5)
    for x in off:
        a1.axvline(x, color="tab:red", lw=0.5)
    a1.set(ylabel="V, A", title="Diode turns on (green) and off (red)")
    a1.legend(loc="lower left", fontsize=8)
    a2.plot(t, speed, color="tab:orange", lw=1.3)
    a2.set(xlabel="time t (s)", ylabel="speed (rad/s)")
    save(fig, out / NAME / "switching.png")
    speed_on = [float(np.interp(x, t, speed)) for x in on]
    summary = {"on": on, "off": off, "speed_at_on": speed_on, "min_current": float(i.min()),
               "max_current": float(i.max()),
               "final_speed": float(speed[-1]), "parameters": p}
    rows = [[f"{a * 1e3:.4f}", f"{b * 1e3:.4f}"] for a, b in zip(on, off, strict=False)]
    text = f"""# A rectifier's switching

`examples/nonsmooth/rectifier_motor.toml`: an AC source of {p['U0']:g} V at {p['w'] / (2 * np.pi):.0f} Hz drives a
DC motor's armature through an ideal diode with a knee voltage of 0.7 V. The diode is a `[diodes]` entry on the
armature current (the flow of the charge coordinate); it conducts until the current falls to zero and blocks until
its voltage reaches the knee voltage. Both switches are located as events of the native simulation (and as event
indicators or located crossings inside `doStep` in the FMU):

```bash
nhbridge simulate examples/nonsmooth/rectifier_motor.toml --stop-time 0.1 -o rectifier.csv
nhbridge fmu examples/nonsmooth/rectifier_motor.toml -o RectifierMotor.fmu
```

![Current, source voltage and motor speed](rectifier/switching.png)

{table(["diode on (ms)", "diode off (ms)"], rows)}

While it blocks the current is exactly zero; it never turns negative (smallest current over the run
{summary['min_current']:.1e} A). `tests/test_gallery.py` checks each turn-on time against the knee condition
U0 sin(ωt) = 0.7 V + ke·speed, and each turn-off against the current's zero.
"""
    write_page(out, NAME, text, summary)
    return summary


if __name__ == "__main__":
    raise SystemExit(main(build, NAME))
