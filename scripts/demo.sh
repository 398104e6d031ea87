#!/usr/bin/env bash
# Set up nhbridge and run the main job on an example: system file -> checks -> equations -> simulation
# -> Modelica model checked by Rumoca against the native simulation -> FMI 2.0 and 3.0 FMUs (ME + CS)
# -> validation report (every method, the Modelica model, every FMU against the reference).
set -euo pipefail
cd "$(dirname "$0")/.."
example="${1:-examples/rolling_sphere.toml}"
# installs into the project's virtual environment (.venv in the checkout, or $NHBRIDGE_VENV), created when missing
source scripts/venv.sh
python -m pip install --quiet --disable-pip-version-check --only-binary rumoca -e ".[modelica,fmu]"
mkdir -p out
nhbridge check "$example"
nhbridge derive "$example" --method lagrange --format latex -o out/equations.tex
nhbridge derive "$example" --stats
nhbridge simulate "$example" --method maggi -o out/simulation.csv
name=$(python -c "import bridge,sys; print(bridge.load_system(sys.argv[1]).name)" "$example")
nhbridge modelica "$example" --method lagrange -o "out/$name.mo" --check rumoca
nhbridge fmu "$example" -o "out/$name.fmu"
nhbridge fmu "$example" --fmi-version 3 -o "out/${name}_fmi3.fmu"
nhbridge validate "$example" --report out/validation.html --json out/validation.json --csv out/validation.csv
