"""A tiny foreign FMI 2.0 Co-Simulation FMU, written in C and compiled with gcc, that misbehaves on request.

Its one output ``y`` is the time. ``mode`` chooses what ``fmi2DoStep`` does from ``t >= 0.05`` on: "ok" (nothing
special), "segfault" (writes through a null pointer), "hang" (never returns), "slow" (sleeps 20 ms per step),
"kill-parent-once" (SIGKILLs the process that started the simulating one, e.g. a Dask worker, unless the file named by
``$FOREIGN_FMU_KILL_MARKER`` exists; it creates that file, with the killed pid, first: one kill in all).
Every FMI 2.0 function is exported (fmpy resolves them all); those a co-simulation does not need return fmi2Error.
"""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

MODES = {"ok": 0, "segfault": 1, "hang": 2, "slow": 3, "kill-parent-once": 4}

C_SOURCE = r"""
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#define EXPORT __attribute__((visibility("default")))
typedef struct { double t; } Comp;
EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char *fmi2GetVersion(void) { return "2.0"; }
EXPORT void *fmi2Instantiate(const char *n, int k, const char *g, const char *r, const void *cb, int v, int l) {
    return calloc(1, sizeof(Comp));
}
EXPORT void fmi2FreeInstance(void *c) { free(c); }
EXPORT int fmi2SetDebugLogging(void *c, int on, size_t n, const char *const cats[]) { return 0; }
EXPORT int fmi2SetupExperiment(void *c, int tolDef, double tol, double t0, int stopDef, double stop) {
    ((Comp *)c)->t = t0; return 0;
}
EXPORT int fmi2EnterInitializationMode(void *c) { return 0; }
EXPORT int fmi2ExitInitializationMode(void *c) { return 0; }
EXPORT int fmi2Terminate(void *c) { return 0; }
EXPORT int fmi2Reset(void *c) { ((Comp *)c)->t = 0; return 0; }
EXPORT int fmi2GetReal(void *c, const unsigned *vr, size_t n, double *v) {
    for (size_t i = 0; i < n; i++) v[i] = ((Comp *)c)->t;
    return 0;
}
EXPORT int fmi2SetReal(void *c, const unsigned *vr, size_t n, const double *v) { return 0; }
EXPORT int fmi2DoStep(void *c, double t, double h, int noSet) {
    if (t >= 0.05) {
        if (MODE == 1) { volatile int *p = 0; *p = 1; }
        if (MODE == 2) { for (;;) sleep(1); }
        if (MODE == 3) usleep(20000);
        if (MODE == 4) {
            const char *marker = getenv("FOREIGN_FMU_KILL_MARKER");
            int fd = marker ? open(marker, O_CREAT | O_EXCL | O_WRONLY, 0644) : -1;
            if (fd >= 0) {
                dprintf(fd, "%d\n", (int)getppid());
                close(fd);
                kill(getppid(), SIGKILL);
            }
        }
    }
    ((Comp *)c)->t = t + h;
    return 0;
}
#define UNUSED(name) EXPORT int name(void) { return 3; }
UNUSED(fmi2GetInteger) UNUSED(fmi2GetBoolean) UNUSED(fmi2GetString) UNUSED(fmi2SetInteger) UNUSED(fmi2SetBoolean)
UNUSED(fmi2SetString) UNUSED(fmi2GetFMUstate) UNUSED(fmi2SetFMUstate) UNUSED(fmi2FreeFMUstate)
UNUSED(fmi2SerializedFMUstateSize) UNUSED(fmi2SerializeFMUstate) UNUSED(fmi2DeSerializeFMUstate)
UNUSED(fmi2GetDirectionalDerivative) UNUSED(fmi2SetRealInputDerivatives) UNUSED(fmi2GetRealOutputDerivatives)
UNUSED(fmi2CancelStep) UNUSED(fmi2GetStatus) UNUSED(fmi2GetRealStatus) UNUSED(fmi2GetIntegerStatus)
UNUSED(fmi2GetBooleanStatus) UNUSED(fmi2GetStringStatus)
UNUSED(fmi2EnterEventMode) UNUSED(fmi2NewDiscreteStates) UNUSED(fmi2EnterContinuousTimeMode)
UNUSED(fmi2CompletedIntegratorStep) UNUSED(fmi2SetTime) UNUSED(fmi2SetContinuousStates) UNUSED(fmi2GetDerivatives)
UNUSED(fmi2GetEventIndicators) UNUSED(fmi2GetContinuousStates) UNUSED(fmi2GetNominalsOfContinuousStates)
"""

MODEL_DESCRIPTION = """<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="{name}" guid="{{7d1e2f00-0000-4000-8000-00000000000{mode}}}"
  generationTool="tests/foreign_fmu.py" numberOfEventIndicators="0">
  <CoSimulation modelIdentifier="{identifier}" canHandleVariableCommunicationStepSize="true"/>
  <ModelVariables>
    <ScalarVariable name="y" valueReference="0" causality="output" variability="continuous" initial="calculated">
      <Real/>
    </ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs><Unknown index="1" dependencies=""/></Outputs>
    <InitialUnknowns><Unknown index="1" dependencies=""/></InitialUnknowns>
  </ModelStructure>
</fmiModelDescription>
"""


def compile_library(source: str, target: Path, defines: dict[str, int] | None = None) -> Path:
    """``source`` compiled with gcc into the shared library ``target``."""
    cc = shutil.which("gcc") or shutil.which("cc")
    assert cc, "the foreign test FMU needs gcc"
    src = target.with_suffix(".c")
    src.write_text(source)
    flags = [f"-D{k}={v}" for k, v in (defines or {}).items()]
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-fvisibility=hidden", *flags, "-o", str(target), str(src)],
                   check=True, capture_output=True)
    return target


def foreign_fmu(folder: Path, mode: str = "ok", name: str = "Foreign", identifier: str | None = None,
                description: str | None = None) -> Path:
    """``folder/<name>.fmu``: the C FMU above in the given mode (``identifier`` and ``description`` override the
    modelIdentifier and the whole modelDescription.xml, for hostile variants)."""
    identifier = identifier or name
    build = folder / f"build-{name}"
    build.mkdir(parents=True, exist_ok=True)
    library = compile_library(C_SOURCE, build / f"{name}.so", {"MODE": MODES[mode]})
    path = folder / f"{name}.fmu"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("modelDescription.xml", description or MODEL_DESCRIPTION.format(
            name=name, identifier=identifier, mode=MODES[mode]))
        zf.write(library, f"binaries/linux64/{name}.so")
    return path
