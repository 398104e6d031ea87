#!/usr/bin/env bash
# Set up (install nhbridge with its test dependencies) and run the tests.
# Without arguments every test module runs in its own pytest process, as many at once as there are cores
# (scripts/run_tests.py): FMU libraries, fmpy's process-wide logger and signal handlers that one module
# leaves loaded cannot change what another module sees.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check --only-binary rumoca -e ".[test]"
python3 -m ruff check bridge tests benchmarks
if [ $# -gt 0 ]; then
    exec python3 -m pytest -q "$@"
fi
exec python3 scripts/run_tests.py
