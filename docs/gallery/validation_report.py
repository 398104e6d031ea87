"""Gallery: a validation report: every method, the Modelica model and every FMU against the reference."""

from __future__ import annotations

import base64
import json
import re
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
from gallery import EXAMPLES, main, nhbridge, table, write_page

NAME = "validation_report"
SYSTEM = EXAMPLES / "simple_pendulum.toml"


def build(out: Path) -> dict:
    """Run ``nhbridge validate``, keep the report's pictures and its table of runs."""
    with tempfile.TemporaryDirectory() as tmp:
        html, js = Path(tmp) / "report.html", Path(tmp) / "report.json"
        nhbridge("validate", SYSTEM, "--report", html, "--json", js, "--quiet")
        report = json.loads(js.read_text())
        page = html.read_text()
    pictures = []
    for k, (alt, data) in enumerate(re.findall(r"<img alt='([^']*)' src='data:image/png;base64,([^']+)'", page)):
        path = out / NAME / f"figure{k + 1}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        pictures.append((alt, path.name))
    system = report["systems"][0]
    runs = [(r["id"], r["status"], r["tolerance"],
             max((s["max_rel"] for s in r.get("signals", [])), default=float("nan")), r.get("reason", ""))
            for r in system["runs"]]
    summary = {"exit_code": report["exit_code"], "status": system["status"],
               "runs": [{"id": i, "status": s, "tolerance": t, "max_rel": e} for i, s, t, e, _ in runs]}
    rows = [[i, s, f"{t:g}", "" if e != e else f"{e:.1e}", reason] for i, s, t, e, reason in runs]
    figures = "\n\n".join(f"![{alt}]({NAME}/{name})" for alt, name in pictures)
    text = f"""# A validation report

`nhbridge validate` runs a system by every applicable method natively, through its Modelica model in Rumoca and
pymoca, and as FMI 2.0 and 3.0 FMUs (Model Exchange under fmpy's CVode, Co-Simulation on the FMU's own
integrator), and compares each run with the reference (the native lagrange run at tight tolerance) signal by
signal, within a tolerance per kind of run; it also checks the constraint residuals and the energy balance:

```bash
nhbridge validate examples/simple_pendulum.toml --report report.html --json report.json
```

The report (one self-contained HTML file, with JSON and CSV beside it) for the simple pendulum:

{table(["run", "status", "tolerance", "largest relative error", "reason"], rows)}

{figures}

The same checks run inside a test suite through the pytest plugin (`pytest --nhbridge-validate=examples/`),
and on Dask with `--scheduler`.
"""
    write_page(out, NAME, text, summary)
    return summary


if __name__ == "__main__":
    raise SystemExit(main(build, NAME))
