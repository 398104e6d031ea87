"""Gallery: the Whipple bicycle at 3 m/s stabilised by LQR, co-simulated as two FMUs.

The bicycle is unstable below its weave speed (4.29 m/s). The rider's steer torque ``T_delta`` is the input;
LQR on the four-state minimal model (roll, steer and their rates) gives ``T_delta = -K x``. The law is written
as a controller FMU, co-simulated with the nonlinear bicycle's FMU from a roll of 0.05 rad, and compared with
the native simulation of the nonlinear closed loop and with the linear prediction. Pictures:

- ``eigenvalues.png``: the real parts of the eigenvalues against speed, open loop and with the gain designed
  at 3 m/s held fixed;
- ``roll.png``: the closed-loop roll: co-simulation, native nonlinear closed loop, linear model.

Run from the repository root (about a minute)::

    python docs/gallery/bicycle_lqr.py [-o docs/gallery/bicycle_lqr]

The same commands from a shell::

    nhbridge controller examples/control/bicycle_steered.toml --lqr examples/control/bicycle_lqr.toml \\
        -o examples/control/bicycle_controller.fmu
    nhbridge cosim examples/control/bicycle_closed_loop.toml -o closed_loop.csv
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.linalg

ROOT = Path(__file__).resolve().parents[2]
CONTROL = ROOT / "examples" / "control"
ROLL0 = 0.05
STOP = 4.0
SPEEDS = np.linspace(0.5, 10.0, 96)


def design():
    """(system, eom, plant, law) at the file's 3 m/s."""
    import bridge
    from bridge.control import lqr, read_weights
    from bridge.control.feedback import measured_names

    system = bridge.load_system(CONTROL / "bicycle_steered.toml")
    eom = bridge.derive(system, "lagrange")
    plant = bridge.linearize(eom)
    law = lqr(plant, *read_weights(CONTROL / "bicycle_lqr.toml", plant), measured_names(system, plant))
    return system, eom, plant, law


def eigenvalues_against_speed(system, eom, law, speeds=SPEEDS) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues of A(v) (open loop) and A(v) - B(v) K (the gain held), one row per speed."""
    from bridge.linearization.linearize import Linearizer
    from bridge.linearization.sweep import Sweep, SweepSpec

    lin = Linearizer(eom)
    r_R = next(p.value for p in system.parameters if p.name == "r_R")
    # as nhbridge linearize --sweep: each speed projected onto the constraints from the file's start state
    sweep = Sweep(lin, system, SweepSpec("der(theta_R)", -speeds[0] / r_R, -speeds[-1] / r_R, len(speeds)))
    open_, closed = [], []
    for v in speeds:  # the rear wheel's spin sets the speed; the other velocities follow from the constraints
        m = sweep.model_at(-v / r_R)
        open_.append(np.sort_complex(np.linalg.eigvals(m.A)))
        closed.append(np.sort_complex(np.linalg.eigvals(m.A - m.B @ law.K)))
    return np.array(open_), np.array(closed)


def linear_roll(plant, law, time: np.ndarray) -> np.ndarray:
    """The roll of the linear closed loop from the roll ROLL0: ``x(t) = expm((A - B K) t) x(0)``."""
    x0 = np.zeros(len(plant.states))
    x0[plant.states.index("phi")] = ROLL0
    Acl = plant.A - plant.B @ law.K
    return np.array([(scipy.linalg.expm(Acl * t) @ x0)[plant.states.index("phi")] for t in time])


def plot(out: Path, speeds, open_, closed, time, native_roll, cosim_roll, linear, step: float) -> list[Path]:
    """The two pictures into ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(speeds, open_.real, color="tab:gray", lw=1.2)
    ax.plot(speeds, closed.real, color="tab:blue", lw=1.2)
    ax.axhline(0.0, color="black", lw=0.6)
    ax.axvline(3.0, color="tab:blue", ls=":", lw=0.8)
    ax.plot([], [], color="tab:gray", label="open loop")
    ax.plot([], [], color="tab:blue", label="LQR gain designed at 3 m/s, held")
    ax.set(xlabel="forward speed v (m/s)", ylabel="Re(lambda) (1/s)", ylim=(-12, 6),
           title="Whipple bicycle: eigenvalues against speed")
    ax.legend(loc="lower left")
    fig.tight_layout()
    eig_png = out / "eigenvalues.png"
    fig.savefig(eig_png, dpi=110)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(time, cosim_roll, color="tab:orange", lw=2.2, label=f"co-simulation of two FMUs (h = {step * 1e3:g} ms)")
    ax.plot(time, native_roll, color="black", lw=1.0, label="native nonlinear closed loop")
    ax.plot(time, linear, color="tab:blue", ls="--", lw=1.0, label="linear model")
    ax.set(xlabel="time t (s)", ylabel="roll phi (rad)", title="Closed-loop roll from 0.05 rad at 3 m/s")
    ax.legend()
    fig.tight_layout()
    roll_png = out / "roll.png"
    fig.savefig(roll_png, dpi=110)
    plt.close(fig)
    return [eig_png, roll_png]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=str(ROOT / "docs" / "gallery" / "bicycle_lqr"),
                        help="folder for the pictures and summary.json")
    parser.add_argument("--step", type=float, default=0.002, help="communication step of the co-simulation, s")
    args = parser.parse_args(argv)
    import bridge
    from bridge.control import closed_loop_system, controller_fmu
    from bridge.cosim import prepare

    system, eom, plant, law = design()
    print(law.report())
    open_, closed = eigenvalues_against_speed(system, eom, law)
    native = bridge.simulate(bridge.derive(closed_loop_system(system, law).with_values(phi=ROLL0), "lagrange"),
                             STOP, rtol=1e-10, atol=1e-12, interval=args.step).columns()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        controller_fmu(law, work / "bicycle_controller.fmu")
        text = (CONTROL / "bicycle_closed_loop.toml").read_text()
        plant_file = json.dumps(str(CONTROL / "bicycle_steered.toml"))
        text = text.replace('system = "bicycle_steered.toml"', f"system = {plant_file}")
        (work / "scenario.toml").write_text(text)
        with prepare(work / "scenario.toml", work / "build") as cs:
            result = cs.run(step=args.step, stop_time=STOP)
    linear = linear_roll(plant, law, native["time"])
    out = Path(args.output)
    pictures = plot(out, SPEEDS, open_, closed, native["time"], native["phi"], result["bike.roll"], linear, args.step)
    error = float(np.max(np.abs(result["bike.roll"] - native["phi"])) / np.ptp(native["phi"]))
    summary = {"K": law.K.tolist(), "open_loop": [str(z) for z in np.linalg.eigvals(plant.A)],
               "closed_loop": [str(z) for z in law.eigenvalues()], "step": args.step,
               "cosim_roll_error_relative_to_range": error}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"co-simulation roll error {error:.3g} of the range at h = {args.step} s; wrote "
          + ", ".join(str(p) for p in pictures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
