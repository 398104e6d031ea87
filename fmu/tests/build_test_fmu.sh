#!/usr/bin/env bash
# Build the FMI 2.0 and FMI 3.0 test FMUs of the hand-written pendulum (fmu/tests/model_pendulum.c)
# with the fixed runtime, the way the exporter will build generated models:
#
#   <out>/fmi2/Pendulum.fmu   modelDescription.xml, binaries/linux64/Pendulum.so, sources/
#   <out>/fmi3/Pendulum.fmu   modelDescription.xml, binaries/x86_64-linux/Pendulum.so,
#                             sources/ (with buildDescription.xml)
#
# sources/ is a flat directory with everything needed to rebuild the binary: runtime, model.c,
# nhb_model.h, nhb_core.h, model_no_jacobian.h and the FMI headers. The binary is compiled FROM sources/, so an
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
    cp "$fmu_dir/fmi${version}_runtime.c" "$fmu_dir/nhb_core.c" "$fmu_dir/nhb_core.h" \
       "$fmu_dir/nhb_split.c" "$fmu_dir/nhb_split.h" "$fmu_dir/nhb_linalg.c" "$fmu_dir/nhb_jacobian.c" \
       "$fmu_dir/nhb_jacobian.h" "$fmu_dir/nhb_model.h" \
       "$stage/sources/"
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
    local cmd=("$cc" "${cflags[@]}" -I"$stage/sources"
               "$stage/sources/fmi${version}_runtime.c" "$stage/sources/nhb_core.c" "$stage/sources/nhb_split.c"
               "$stage/sources/nhb_linalg.c" "$stage/sources/nhb_jacobian.c" "$stage/sources/model.c"
               -lm -o "$stage/binaries/$platform/$id.so")
    echo "${cmd[*]}"
    "${cmd[@]}"

    # zip (python's zipfile: no dependency on the zip tool)
    (cd "$stage" && python3 -m zipfile -c "$fmu" modelDescription.xml binaries sources)
    echo "built $fmu"
}

build 2 linux64
build 3 x86_64-linux
