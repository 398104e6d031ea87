#!/usr/bin/env bash
# Set up nhbridge and run the main job on an example: system file -> checks -> equations -> simulation.
set -euo pipefail
cd "$(dirname "$0")/.."
example="${1:-examples/rolling_sphere.toml}"
python3 -m pip install --quiet --disable-pip-version-check -e .
mkdir -p out
nhbridge check "$example"
nhbridge derive "$example" --method chaplygin --format latex -o out/equations.tex
nhbridge derive "$example" --stats
nhbridge simulate "$example" --method maggi -o out/simulation.csv
