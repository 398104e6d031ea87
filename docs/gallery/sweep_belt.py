"""Gallery: a sweep of the stick–slip oscillator's belt speed on Dask, plotted from its Parquet file."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
from gallery import EXAMPLES, main, nhbridge, pyplot, save, table, write_page

NAME = "sweep_belt"
SYSTEM = EXAMPLES / "nonsmooth" / "belt_friction.toml"
CASES = 9


def amplitude(v_belt: float, m: float = 1.0, k: float = 10.0, g: float = 9.81, mu_s: float = 0.4,
              mu_k: float = 0.3) -> float:
    """Largest position of the stick–slip limit cycle: ``x_k + sqrt((x_s - x_k)^2 + (v_belt/omega)^2)``."""
    x_s, x_k, omega = mu_s * m * g / k, mu_k * m * g / k, math.sqrt(k / m)
    return x_k + math.hypot(x_s - x_k, v_belt / omega)


def build(out: Path) -> dict:
    """Run the sweep on a local Dask cluster, read its Parquet file with pandas, plot, write the page."""
    import pandas as pd

    with tempfile.TemporaryDirectory() as tmp:
        parquet = Path(tmp) / "sweep.parquet"
        nhbridge("sweep", SYSTEM, "--grid", f"v_belt=0.1:0.5:{CASES}", "--set", "der(x)=0", "--stop-time", "10",
                 "--record", "max(x)", "--workers", "2", "-o", parquet, "--quiet")
        frame = pd.read_parquet(parquet).sort_values("v_belt")
    v = frame["v_belt"].to_numpy()
    peak = frame["max(x)"].to_numpy()
    closed = np.array([amplitude(x) for x in v])
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4))
    fine = np.linspace(v.min(), v.max(), 200)
    ax.plot(fine, [amplitude(x) for x in fine], color="black", lw=1.0, label="closed form of the limit cycle")
    ax.plot(v, peak, "o", color="tab:blue", label="FMU runs on Dask (from the Parquet file)")
    ax.set(xlabel="belt speed v_belt (m/s)", ylabel="largest position max(x) (m)",
           title="Stick–slip amplitude against belt speed")
    ax.legend(loc="upper left")
    save(fig, out / NAME / "amplitude.png")
    summary = {"v_belt": v.tolist(), "max_x": peak.tolist(), "closed_form": closed.tolist(),
               "status": frame["status"].tolist()}
    rows = [[f"{a:.2f}", f"{b:.6f}", f"{c:.6f}"] for a, b, c in zip(v, peak, closed, strict=True)]
    text = f"""# A sweep on Dask, plotted from Parquet

The stick–slip oscillator of `examples/nonsmooth/belt_friction.toml`, started at rest on belts of {CASES} speeds
from 0.1 to 0.5 m/s. `nhbridge sweep` builds the system's FMU once and runs one case per belt speed on a local Dask
cluster of two worker processes; each case records the largest position over 10 s. The rows are streamed into a
Parquet file (and a CSV beside it), read back here with pandas:

```bash
nhbridge sweep examples/nonsmooth/belt_friction.toml --grid "v_belt=0.1:0.5:{CASES}" --set "der(x)=0" \\
    --stop-time 10 --record "max(x)" --workers 2 -o sweep.parquet
```

```python
import pandas as pd
frame = pd.read_parquet("sweep.parquet").sort_values("v_belt")
```

![Amplitude against belt speed](sweep_belt/amplitude.png)

Once the mass first sticks, the motion is a limit cycle whose largest position is
x_k + √((x_s − x_k)² + (v_belt/ω)²), with x_s = μ_s m g/k, x_k = μ_k m g/k and ω = √(k/m):

{table(["v_belt (m/s)", "max(x), sweep (m)", "closed form (m)"], rows)}
"""
    write_page(out, NAME, text, summary)
    return summary


if __name__ == "__main__":
    raise SystemExit(main(build, NAME))
