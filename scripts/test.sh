#!/usr/bin/env bash
# Set up (install nhbridge with its test dependencies) and run the tests.
# Without arguments every test module runs in its own pytest process: FMU libraries, fmpy's process-wide
# logger and signal handlers that one module leaves loaded cannot change what another module sees.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check --only-binary rumoca -e ".[test]"
python3 -m ruff check bridge tests benchmarks
if [ $# -gt 0 ]; then
    exec python3 -m pytest -q "$@"
fi
failed=()
for module in tests/test_*.py; do
    python3 -m pytest -q -p no:cacheprovider "$module" || failed+=("$module")
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "failed modules: ${failed[*]}"
    exit 1
fi
echo "all test modules passed"
