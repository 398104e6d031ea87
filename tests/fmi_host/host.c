/* A small FMI 2.0 / 3.0 host for the tests: loads one FMU binary (dlopen or LoadLibrary), instantiates it, runs
 * Co-Simulation (doStep with a fixed communication step) or Model Exchange (classic Runge-Kutta 4 with a fixed
 * step; state events detected by a sign change of an event indicator over a step and handled at the step's end,
 * time events at the first step end at or past the event time) and writes the given variables as CSV (%.17g).
 * The same source is compiled for every platform, so a platform's run of its binary can be compared with
 * another's number by number.
 *
 * usage: host VERSION(2|3) MODE(cs|me) LIBRARY TOKEN STOP STEP OUT.csv NX NZ ITEM [ITEM ...]
 * ITEM: VR (a Float64 variable written as a column) or VR=VALUE (set before the initialization).
 * exit codes: 0 done, 1 an FMI call failed (its name on stderr), 2 bad arguments or a missing library/symbol. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2FunctionTypes.h"
#include "fmi3FunctionTypes.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

typedef void (*function)(void);

static void *library;

static int open_library(const char *path)
{
#ifdef _WIN32
    library = (void *)LoadLibraryA(path);
#else
    library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
#endif
    return library != NULL;
}

static function symbol(const char *name)
{
    function f = NULL;
#ifdef _WIN32
    FARPROC p = GetProcAddress((HMODULE)library, name);
    f = (function)p;
#else
    void *p = dlsym(library, name);
    memcpy(&f, &p, sizeof f); /* ISO C has no object-to-function pointer conversion */
#endif
    if (f == NULL) {
        fprintf(stderr, "host: the library has no symbol %s\n", name);
        exit(2);
    }
    return f;
}

#define LOAD(type, name) type *name = (type *)symbol(#name)
#define CHECK(call)                                                          \
    do {                                                                     \
        int status_ = (int)(call);                                           \
        if (status_ > 1) { /* warning passes; discard, error, fatal fail */ \
            fprintf(stderr, "host: %s returned status %d\n", #call, status_); \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

static int nvr, nset;
static unsigned int *vrs, *set_vrs;
static double *values, *set_values;
static FILE *out;

static void header(void)
{
    fprintf(out, "time");
    for (int i = 0; i < nvr; ++i) fprintf(out, ",%u", vrs[i]);
    fprintf(out, "\n");
}

static void row(double t)
{
    fprintf(out, "%.17g", t);
    for (int i = 0; i < nvr; ++i) fprintf(out, ",%.17g", values[i]);
    fprintf(out, "\n");
}

static int crossed(const double *before, const double *after, int nz)
{
    for (int i = 0; i < nz; ++i)
        if ((before[i] > 0.0 && after[i] <= 0.0) || (before[i] < 0.0 && after[i] >= 0.0)) return 1;
    return 0;
}

/* -- FMI 2.0 ------------------------------------------------------------------------------------------------ */
static void logger2(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                    fmi2String message, ...)
{
    va_list ap;
    (void)env;
    fprintf(stderr, "[%s %d %s] ", name, (int)status, category);
    va_start(ap, message);
    vfprintf(stderr, message, ap);
    va_end(ap);
    fprintf(stderr, "\n");
}

static int run2(int cs, const char *token, double stop, double step, int nx, int nz)
{
    LOAD(fmi2InstantiateTYPE, fmi2Instantiate);
    LOAD(fmi2FreeInstanceTYPE, fmi2FreeInstance);
    LOAD(fmi2SetupExperimentTYPE, fmi2SetupExperiment);
    LOAD(fmi2EnterInitializationModeTYPE, fmi2EnterInitializationMode);
    LOAD(fmi2ExitInitializationModeTYPE, fmi2ExitInitializationMode);
    LOAD(fmi2TerminateTYPE, fmi2Terminate);
    LOAD(fmi2GetRealTYPE, fmi2GetReal);
    fmi2CallbackFunctions callbacks = {logger2, calloc, free, NULL, NULL};
    fmi2Component c = fmi2Instantiate("host", cs ? fmi2CoSimulation : fmi2ModelExchange, token, "file:///",
                                      &callbacks, fmi2False, fmi2False);
    if (c == NULL) {
        fprintf(stderr, "host: fmi2Instantiate failed\n");
        return 1;
    }
    if (nset) {
        LOAD(fmi2SetRealTYPE, fmi2SetReal);
        CHECK(fmi2SetReal(c, set_vrs, (size_t)nset, set_values));
    }
    CHECK(fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2True, stop));
    CHECK(fmi2EnterInitializationMode(c));
    CHECK(fmi2ExitInitializationMode(c));
    long steps = (long)(stop / step + 0.5);
    if (cs) {
        LOAD(fmi2DoStepTYPE, fmi2DoStep);
        CHECK(fmi2GetReal(c, vrs, (size_t)nvr, values));
        row(0.0);
        for (long k = 0; k < steps; ++k) {
            CHECK(fmi2DoStep(c, (double)k * step, step, fmi2True));
            CHECK(fmi2GetReal(c, vrs, (size_t)nvr, values));
            row((double)(k + 1) * step);
        }
    } else {
        LOAD(fmi2NewDiscreteStatesTYPE, fmi2NewDiscreteStates);
        LOAD(fmi2EnterEventModeTYPE, fmi2EnterEventMode);
        LOAD(fmi2EnterContinuousTimeModeTYPE, fmi2EnterContinuousTimeMode);
        LOAD(fmi2CompletedIntegratorStepTYPE, fmi2CompletedIntegratorStep);
        LOAD(fmi2SetTimeTYPE, fmi2SetTime);
        LOAD(fmi2SetContinuousStatesTYPE, fmi2SetContinuousStates);
        LOAD(fmi2GetContinuousStatesTYPE, fmi2GetContinuousStates);
        LOAD(fmi2GetDerivativesTYPE, fmi2GetDerivatives);
        LOAD(fmi2GetEventIndicatorsTYPE, fmi2GetEventIndicators);
        double *x = calloc((size_t)nx + 1, sizeof *x), *xs = calloc((size_t)nx + 1, sizeof *xs);
        double *k1 = calloc((size_t)nx + 1, sizeof *k1), *k2 = calloc((size_t)nx + 1, sizeof *k2);
        double *k3 = calloc((size_t)nx + 1, sizeof *k3), *k4 = calloc((size_t)nx + 1, sizeof *k4);
        double *z0 = calloc((size_t)nz + 1, sizeof *z0), *z1 = calloc((size_t)nz + 1, sizeof *z1);
        fmi2EventInfo info;
        memset(&info, 0, sizeof info);
        do {
            CHECK(fmi2NewDiscreteStates(c, &info));
        } while (info.newDiscreteStatesNeeded && !info.terminateSimulation);
        CHECK(fmi2EnterContinuousTimeMode(c));
        CHECK(fmi2GetContinuousStates(c, x, (size_t)nx));
        CHECK(fmi2GetEventIndicators(c, z0, (size_t)nz));
        CHECK(fmi2GetReal(c, vrs, (size_t)nvr, values));
        row(0.0);
        for (long k = 0; k < steps && !info.terminateSimulation; ++k) {
            double t = (double)k * step, t1 = (double)(k + 1) * step;
            CHECK(fmi2GetDerivatives(c, k1, (size_t)nx));
            for (int i = 0; i < nx; ++i) xs[i] = x[i] + 0.5 * step * k1[i];
            CHECK(fmi2SetTime(c, t + 0.5 * step));
            CHECK(fmi2SetContinuousStates(c, xs, (size_t)nx));
            CHECK(fmi2GetDerivatives(c, k2, (size_t)nx));
            for (int i = 0; i < nx; ++i) xs[i] = x[i] + 0.5 * step * k2[i];
            CHECK(fmi2SetContinuousStates(c, xs, (size_t)nx));
            CHECK(fmi2GetDerivatives(c, k3, (size_t)nx));
            for (int i = 0; i < nx; ++i) xs[i] = x[i] + step * k3[i];
            CHECK(fmi2SetTime(c, t1));
            CHECK(fmi2SetContinuousStates(c, xs, (size_t)nx));
            CHECK(fmi2GetDerivatives(c, k4, (size_t)nx));
            for (int i = 0; i < nx; ++i) x[i] += step / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            CHECK(fmi2SetContinuousStates(c, x, (size_t)nx));
            fmi2Boolean enter = fmi2False, terminate = fmi2False;
            CHECK(fmi2CompletedIntegratorStep(c, fmi2True, &enter, &terminate));
            CHECK(fmi2GetEventIndicators(c, z1, (size_t)nz));
            int time_event = info.nextEventTimeDefined && t1 >= info.nextEventTime;
            if (enter || time_event || crossed(z0, z1, nz)) {
                CHECK(fmi2EnterEventMode(c));
                do {
                    CHECK(fmi2NewDiscreteStates(c, &info));
                } while (info.newDiscreteStatesNeeded && !info.terminateSimulation);
                CHECK(fmi2EnterContinuousTimeMode(c));
                CHECK(fmi2GetContinuousStates(c, x, (size_t)nx));
                CHECK(fmi2GetEventIndicators(c, z1, (size_t)nz));
            }
            memcpy(z0, z1, sizeof *z0 * (size_t)nz);
            CHECK(fmi2GetReal(c, vrs, (size_t)nvr, values));
            row(t1);
            if (terminate) break;
        }
        free(x); free(xs); free(k1); free(k2); free(k3); free(k4); free(z0); free(z1);
    }
    CHECK(fmi2Terminate(c));
    fmi2FreeInstance(c);
    return 0;
}

/* -- FMI 3.0 ------------------------------------------------------------------------------------------------ */
static void logger3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category, fmi3String message)
{
    (void)env;
    fprintf(stderr, "[%d %s] %s\n", (int)status, category, message);
}

static int run3(int cs, const char *token, double stop, double step, int nx, int nz)
{
    LOAD(fmi3FreeInstanceTYPE, fmi3FreeInstance);
    LOAD(fmi3EnterInitializationModeTYPE, fmi3EnterInitializationMode);
    LOAD(fmi3ExitInitializationModeTYPE, fmi3ExitInitializationMode);
    LOAD(fmi3TerminateTYPE, fmi3Terminate);
    LOAD(fmi3GetFloat64TYPE, fmi3GetFloat64);
    fmi3Instance c;
    if (cs) {
        LOAD(fmi3InstantiateCoSimulationTYPE, fmi3InstantiateCoSimulation);
        c = fmi3InstantiateCoSimulation("host", token, NULL, fmi3False, fmi3False, fmi3False, fmi3False, NULL, 0,
                                        NULL, logger3, NULL);
    } else {
        LOAD(fmi3InstantiateModelExchangeTYPE, fmi3InstantiateModelExchange);
        c = fmi3InstantiateModelExchange("host", token, NULL, fmi3False, fmi3False, NULL, logger3);
    }
    if (c == NULL) {
        fprintf(stderr, "host: fmi3Instantiate failed\n");
        return 1;
    }
    if (nset) {
        LOAD(fmi3SetFloat64TYPE, fmi3SetFloat64);
        CHECK(fmi3SetFloat64(c, set_vrs, (size_t)nset, set_values, (size_t)nset));
    }
    CHECK(fmi3EnterInitializationMode(c, fmi3False, 0.0, 0.0, fmi3True, stop));
    CHECK(fmi3ExitInitializationMode(c));
    long steps = (long)(stop / step + 0.5);
    if (cs) {
        LOAD(fmi3DoStepTYPE, fmi3DoStep);
        CHECK(fmi3GetFloat64(c, vrs, (size_t)nvr, values, (size_t)nvr));
        row(0.0);
        for (long k = 0; k < steps; ++k) {
            fmi3Boolean event = fmi3False, terminate = fmi3False, early = fmi3False;
            fmi3Float64 last = 0.0;
            CHECK(fmi3DoStep(c, (double)k * step, step, fmi3True, &event, &terminate, &early, &last));
            CHECK(fmi3GetFloat64(c, vrs, (size_t)nvr, values, (size_t)nvr));
            row((double)(k + 1) * step);
            if (terminate) break;
        }
    } else {
        LOAD(fmi3UpdateDiscreteStatesTYPE, fmi3UpdateDiscreteStates);
        LOAD(fmi3EnterEventModeTYPE, fmi3EnterEventMode);
        LOAD(fmi3EnterContinuousTimeModeTYPE, fmi3EnterContinuousTimeMode);
        LOAD(fmi3CompletedIntegratorStepTYPE, fmi3CompletedIntegratorStep);
        LOAD(fmi3SetTimeTYPE, fmi3SetTime);
        LOAD(fmi3SetContinuousStatesTYPE, fmi3SetContinuousStates);
        LOAD(fmi3GetContinuousStatesTYPE, fmi3GetContinuousStates);
        LOAD(fmi3GetContinuousStateDerivativesTYPE, fmi3GetContinuousStateDerivatives);
        LOAD(fmi3GetEventIndicatorsTYPE, fmi3GetEventIndicators);
        LOAD(fmi3GetNumberOfContinuousStatesTYPE, fmi3GetNumberOfContinuousStates);
        LOAD(fmi3GetNumberOfEventIndicatorsTYPE, fmi3GetNumberOfEventIndicators);
        size_t nx3 = 0, nz3 = 0;
        CHECK(fmi3GetNumberOfContinuousStates(c, &nx3));
        CHECK(fmi3GetNumberOfEventIndicators(c, &nz3));
        if ((int)nx3 != nx || (int)nz3 != nz) {
            fprintf(stderr, "host: the FMU reports %d states and %d event indicators, the model description %d and "
                            "%d\n", (int)nx3, (int)nz3, nx, nz);
            return 1;
        }
        double *x = calloc((size_t)nx + 1, sizeof *x), *xs = calloc((size_t)nx + 1, sizeof *xs);
        double *k1 = calloc((size_t)nx + 1, sizeof *k1), *k2 = calloc((size_t)nx + 1, sizeof *k2);
        double *k3 = calloc((size_t)nx + 1, sizeof *k3), *k4 = calloc((size_t)nx + 1, sizeof *k4);
        double *z0 = calloc((size_t)nz + 1, sizeof *z0), *z1 = calloc((size_t)nz + 1, sizeof *z1);
        fmi3Boolean update = fmi3True, terminate = fmi3False, nominals = fmi3False, changed = fmi3False;
        fmi3Boolean timed = fmi3False;
        fmi3Float64 next = 0.0;
        while (update && !terminate)
            CHECK(fmi3UpdateDiscreteStates(c, &update, &terminate, &nominals, &changed, &timed, &next));
        CHECK(fmi3EnterContinuousTimeMode(c));
        CHECK(fmi3GetContinuousStates(c, x, (size_t)nx));
        CHECK(fmi3GetEventIndicators(c, z0, (size_t)nz));
        CHECK(fmi3GetFloat64(c, vrs, (size_t)nvr, values, (size_t)nvr));
        row(0.0);
        for (long k = 0; k < steps && !terminate; ++k) {
            double t = (double)k * step, t1 = (double)(k + 1) * step;
            CHECK(fmi3GetContinuousStateDerivatives(c, k1, (size_t)nx));
            for (int i = 0; i < nx; ++i) xs[i] = x[i] + 0.5 * step * k1[i];
            CHECK(fmi3SetTime(c, t + 0.5 * step));
            CHECK(fmi3SetContinuousStates(c, xs, (size_t)nx));
            CHECK(fmi3GetContinuousStateDerivatives(c, k2, (size_t)nx));
            for (int i = 0; i < nx; ++i) xs[i] = x[i] + 0.5 * step * k2[i];
            CHECK(fmi3SetContinuousStates(c, xs, (size_t)nx));
            CHECK(fmi3GetContinuousStateDerivatives(c, k3, (size_t)nx));
            for (int i = 0; i < nx; ++i) xs[i] = x[i] + step * k3[i];
            CHECK(fmi3SetTime(c, t1));
            CHECK(fmi3SetContinuousStates(c, xs, (size_t)nx));
            CHECK(fmi3GetContinuousStateDerivatives(c, k4, (size_t)nx));
            for (int i = 0; i < nx; ++i) x[i] += step / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
            CHECK(fmi3SetContinuousStates(c, x, (size_t)nx));
            fmi3Boolean enter = fmi3False;
            CHECK(fmi3CompletedIntegratorStep(c, fmi3True, &enter, &terminate));
            CHECK(fmi3GetEventIndicators(c, z1, (size_t)nz));
            int time_event = timed && t1 >= next;
            if (enter || time_event || crossed(z0, z1, nz)) {
                CHECK(fmi3EnterEventMode(c));
                update = fmi3True;
                while (update && !terminate)
                    CHECK(fmi3UpdateDiscreteStates(c, &update, &terminate, &nominals, &changed, &timed, &next));
                CHECK(fmi3EnterContinuousTimeMode(c));
                CHECK(fmi3GetContinuousStates(c, x, (size_t)nx));
                CHECK(fmi3GetEventIndicators(c, z1, (size_t)nz));
            }
            memcpy(z0, z1, sizeof *z0 * (size_t)nz);
            CHECK(fmi3GetFloat64(c, vrs, (size_t)nvr, values, (size_t)nvr));
            row(t1);
        }
        free(x); free(xs); free(k1); free(k2); free(k3); free(k4); free(z0); free(z1);
    }
    CHECK(fmi3Terminate(c));
    fmi3FreeInstance(c);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 11) {
        fprintf(stderr, "usage: host VERSION(2|3) MODE(cs|me) LIBRARY TOKEN STOP STEP OUT.csv NX NZ ITEM [ITEM ...]\n");
        return 2;
    }
    int version = atoi(argv[1]);
    int cs = strcmp(argv[2], "cs") == 0;
    double stop = strtod(argv[5], NULL), step = strtod(argv[6], NULL);
    int nx = atoi(argv[8]), nz = atoi(argv[9]);
    if ((version != 2 && version != 3) || (!cs && strcmp(argv[2], "me") != 0) || !(step > 0.0) || !(stop > 0.0)
        || nx < 0 || nz < 0) {
        fprintf(stderr, "host: bad arguments\n");
        return 2;
    }
    if (!open_library(argv[3])) {
        fprintf(stderr, "host: cannot load %s\n", argv[3]);
        return 2;
    }
    vrs = calloc((size_t)argc, sizeof *vrs);
    values = calloc((size_t)argc, sizeof *values);
    set_vrs = calloc((size_t)argc, sizeof *set_vrs);
    set_values = calloc((size_t)argc, sizeof *set_values);
    for (int i = 10; i < argc; ++i) {
        char *end = NULL;
        unsigned long vr = strtoul(argv[i], &end, 10);
        if (*end == '=') {
            set_vrs[nset] = (unsigned int)vr;
            set_values[nset++] = strtod(end + 1, NULL);
        } else {
            vrs[nvr++] = (unsigned int)vr;
        }
    }
    out = fopen(argv[7], "wb"); /* no CRLF on Windows: the same bytes everywhere */
    if (out == NULL) {
        fprintf(stderr, "host: cannot write %s\n", argv[7]);
        return 2;
    }
    header();
    int rc = version == 2 ? run2(cs, argv[4], stop, step, nx, nz) : run3(cs, argv[4], stop, step, nx, nz);
    fclose(out);
    return rc;
}
