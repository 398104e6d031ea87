#!/usr/bin/env bash
# Set up (install nhbridge with its test dependencies) and run the tests.
# Without arguments every test module runs in its own pytest process, as many at once as there are cores
# (scripts/run_tests.py; the light modules a few to a process): FMU libraries, fmpy's process-wide logger and
# signal handlers that one module leaves loaded cannot change what another module sees. The processes are forked
# from one that imported the common libraries once (scripts/pytest_forks.py), each from the same clean state.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages the tests run: the cross compilers and runners of the FMU platform tests
# (tests/test_fmu_platforms.py: Windows x64 under wine, Linux aarch64 under qemu-aarch64) and the TBB runtime
# of Ecos (ecospy), an SSP master the co-simulation tests run our packages in, and Chromium, the browser the
# animation tests open the pages in (driven by Playwright's Python package, launched on /usr/bin/chromium).
# Installed when missing (as root, non-interactive); NHBRIDGE_NO_APT=1 skips the install.
DEBIAN_PACKAGES=(gcc gcc-mingw-w64-x86-64 wine wine64 gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user libtbb12
                 chromium)
install_debian_packages() {
    command -v dpkg-query >/dev/null 2>&1 || { echo "test.sh: no dpkg here; not installing ${DEBIAN_PACKAGES[*]}" \
        "(the FMU platform tests skip, naming what is missing)"; return 0; }
    local missing=()
    for pkg in "${DEBIAN_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local why=""
    if [ "${NHBRIDGE_NO_APT:-0}" = 1 ]; then why="NHBRIDGE_NO_APT=1"
    elif [ "$(id -u)" -ne 0 ]; then why="not root"
    elif ! command -v apt-get >/dev/null 2>&1; then why="no apt-get"
    fi
    if [ -n "$why" ]; then
        echo "test.sh: cannot install ${missing[*]} ($why): the FMU platform tests skip;" \
             "install them with: apt-get install ${missing[*]}"
        return 0
    fi
    echo "test.sh: installing ${missing[*]} (apt-get)"
    local start=$SECONDS
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    echo "test.sh: installed ${missing[*]} in $((SECONDS - start)) s"
}
install_debian_packages
# The project's virtual environment (.venv in the checkout, or $NHBRIDGE_VENV), created when missing: nothing is
# installed into the interpreter that happens to be first on PATH.
source scripts/venv.sh
python -m pip install --quiet --disable-pip-version-check --only-binary rumoca -e ".[test]"
python -m ruff check .
# With arguments, one pytest process over the tests they select, e.g. the fast subset: test.sh -m "not slow"
if [ $# -gt 0 ]; then
    exec python -m pytest -q "$@"
fi
exec python scripts/run_tests.py
