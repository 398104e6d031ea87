# Sourced by scripts/demo.sh and scripts/test.sh: create the project's virtual environment when missing and
# activate it, so that `python`, `pip` and `nhbridge` are the environment's own.
#   NHBRIDGE_VENV   where the environment lives (default: .venv in the checkout)
#   NHBRIDGE_PYTHON the interpreter that creates it (default: python3; Python >= 3.11)
venv="${NHBRIDGE_VENV:-.venv}"
if [ ! -x "$venv/bin/python" ]; then
    base="${NHBRIDGE_PYTHON:-python3}"
    command -v "$base" >/dev/null 2>&1 || { echo "${0##*/}: $base not found: install Python >= 3.11" \
        "or name an interpreter with NHBRIDGE_PYTHON=/path/to/python3.11" >&2; exit 2; }
    "$base" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "${0##*/}: $base is" \
        "$("$base" -c 'import platform; print(platform.python_version())'); nhbridge needs Python >= 3.11" \
        "(NHBRIDGE_PYTHON=/path/to/python3.11)" >&2; exit 2; }
    echo "${0##*/}: creating the virtual environment $venv"
    "$base" -m venv "$venv" || { echo "${0##*/}: could not create $venv (on Debian: apt-get install" \
        "python3-venv)" >&2; exit 2; }
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
fi
# shellcheck disable=SC1091
source "$venv/bin/activate"
