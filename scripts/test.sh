#!/usr/bin/env bash
# Set up (install nhbridge with its test dependencies) and run the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check --only-binary rumoca -e ".[test]"
python3 -m ruff check bridge tests benchmarks
python3 -m pytest -q "$@"
