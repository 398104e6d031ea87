#!/usr/bin/env bash
# Build the FMI 2.0 and FMI 3.0 test FMUs of the hand-written pendulum (fmu/tests/model_pendulum.c)
# with the fixed runtime, the way the exporter will build generated models:
#
#   <out>/fmi2/Pendulum.fmu   modelDescription.xml, binaries/linux64/Pendulum.so, sources/
#   <out>/fmi3/Pendulum.fmu   modelDescription.xml, binaries/x86_64-linux/Pendulum.so,
#                             sources/ (with buildDescription.xml)
#
# sources/ is a flat directory with everything needed to rebuild the binary: runtime, model.c,
# the runtime's headers, model_no_jacobian.h and the FMI headers. The binary is compiled FROM sources/, so an
# incomplete sources/ fails here already.
#
# Usage: fmu/tests/build_test_fmu.sh [out_dir]        (default: fmu/tests/build)
# Environment: CC (default gcc); NHB_EXTRA_CFLAGS, appended to the flags (e.g. the sanitizer build of
# tests/test_fmu_sanitizers.py: "-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer").
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
fmu_dir="$(cd "$here/.." && pwd)"
out="$(mkdir -p "${1:-$here/build}" && cd "${1:-$here/build}" && pwd)"
cc="${CC:-gcc}"
id="Pendulum"

# The compiler flags of the runtime: C99, warning-free (-Werror here), position independent,
# only the FMI functions exported (-fvisibility=hidden; the FMI headers mark them "default").
cflags=(-std=c99 -O2 -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden)
read -r -a extra <<< "${NHB_EXTRA_CFLAGS:-}"
cflags+=("${extra[@]}")

build() {
    local version="$1" platform="$2"
    local stage="$out/fmi$version/stage"
    local fmu="$out/fmi$version/$id.fmu"

    rm -rf "$stage" "$fmu"
    mkdir -p "$stage/sources" "$stage/binaries/$platform"

    # sources/: runtime, FMI headers, model.c
    # the runtime's files as the FMU builder lists them (fmu/__init__.py)
    local sources headers file
    read -r -a sources <<< "$(python3 "$fmu_dir/__init__.py" sources "$version")"
    read -r -a headers <<< "$(python3 "$fmu_dir/__init__.py" headers)"
    for file in "${sources[@]}" "${headers[@]}"; do
        cp "$fmu_dir/$file" "$stage/sources/"
    done
    cp "$fmu_dir/include/fmi$version/"*.h "$stage/sources/"
    if [ "$version" = 3 ]; then
        # the FMI 3 value references (0 = time) are selected by this define in the test model
        { echo "#define NHB_PENDULUM_FMI3 1"; cat "$here/model_pendulum.c"; } > "$stage/sources/model.c"
        cp "$here/fmi3/buildDescription.xml" "$stage/sources/"
    else
        cp "$here/model_pendulum.c" "$stage/sources/model.c"
    fi
    cp "$here/model_no_jacobian.h" "$stage/sources/" # included by model.c
    cp "$here/fmi$version/modelDescription.xml" "$stage/"

    # binary, built from sources/ only
    local cmd=("$cc" "${cflags[@]}" -I"$stage/sources" "${sources[@]/#/$stage/sources/}" "$stage/sources/model.c"
               -lm -o "$stage/binaries/$platform/$id.so")
    echo "${cmd[*]}"
    "${cmd[@]}"

    # zip (python's zipfile: no dependency on the zip tool)
    (cd "$stage" && python3 -m zipfile -c "$fmu" modelDescription.xml binaries sources)
    echo "built $fmu"
}

build 2 linux64
build 3 x86_64-linux
