/* C-level test of the runtime through its FMI 2 and FMI 3 APIs (both layers linked into one
 * executable with model_scalar.c): integrator accuracy, integrator failures (blow-up, stiffness),
 * error paths, state machine, NULL arguments, logging. check_runtime.py builds and runs it, with
 * -fsanitize=address,undefined when the compiler supports it:
 *
 *   gcc -std=c99 -O2 -Wall -Wextra -I fmu -I fmu/include/fmi2 -I fmu/include/fmi3 \
 *       fmu/tests/test_runtime.c fmu/tests/model_scalar.c <the runtime's C files of FMI 2 and 3> -lm
 *
 * (the files: python3 fmu/__init__.py sources 2, and sources 3)
 *
 * Prints one line per failed check (-v: also every log message) and exits with the number of
 * failures. Value references of model_scalar.c: 0 time, 1 x, 2 der(x), 3 a, 4 b, 5 c, 6 xmax,
 * 7 u, 8 y.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "fmi3Functions.h"
#include "fmi2_values.h"

#define TOKEN "{scalar-test-model}"
enum { VR_TIME, VR_X, VR_DX, VR_A, VR_B, VR_C, VR_XMAX, VR_U, VR_Y };

static int failures = 0, verbose = 0;
static char last_error[4096];  /* last message logged with status Error */
static int n_errors, n_debug;  /* counts of logged messages */

#define CHECK(cond) check((cond) != 0, #cond, __LINE__)

static void check(int ok, const char *what, int line)
{
    if (!ok) {
        printf("FAIL (line %d): %s\n", line, what);
        failures++;
    }
}

static void record(int is_error, int is_ok, const char *text)
{
    if (is_error) {
        n_errors++;
        snprintf(last_error, sizeof last_error, "%s", text);
    }
    if (is_ok)
        n_debug++;
    if (verbose)
        printf("    log: %s\n", text);
}

/* FMI 2 logger: the message is a printf format string (the runtime escapes '%'). */
static void logger2(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                    fmi2String message, ...)
{
    char buf[4096];
    va_list ap;
    (void)env;
    (void)name;
    (void)category;
    va_start(ap, message);
    vsnprintf(buf, sizeof buf, message, ap);
    va_end(ap);
    record(status >= fmi2Error, status == fmi2OK, buf);
}

static void logger3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category, fmi3String message)
{
    (void)env;
    (void)category;
    record(status >= fmi3Error, status == fmi3OK, message);
}

static const fmi2CallbackFunctions callbacks2 = {logger2, calloc, free, NULL, NULL};

/* A Co-Simulation instance, initialized with the given tolerance and parameter changes. */
static fmi2Component cs2(double tol, int n_set, const unsigned int *vrs, const double *values)
{
    fmi2Component c = fmi2Instantiate("cs", fmi2CoSimulation, TOKEN, "", &callbacks2, fmi2False, fmi2False);
    int i;
    if (c == NULL)
        return NULL;
    for (i = 0; i < n_set; i++)
        CHECK(set2(c, vrs[i], values[i]) == fmi2OK);
    CHECK(fmi2SetupExperiment(c, fmi2True, tol, 0.0, fmi2False, 0.0) == fmi2OK);
    CHECK(fmi2EnterInitializationMode(c) == fmi2OK);
    CHECK(fmi2ExitInitializationMode(c) == fmi2OK);
    return c;
}

/* ---------------------------------------------------------------------------------------------- */

static void test_fmi2_cs_accuracy(void)
{
    fmi2Component c = cs2(1e-10, 0, NULL, NULL);
    double t = 0.0, last = -1.0;
    int i;

    CHECK(c != NULL);
    if (c == NULL)
        return;
    for (i = 0; i < 10; i++, t += 0.1)
        CHECK(fmi2DoStep(c, t, 0.1, fmi2True) == fmi2OK);
    CHECK(fabs(get2(c, VR_X) - exp(-1.0)) < 1e-10);       /* x = exp(-t) */
    CHECK(get2(c, VR_DX) == -get2(c, VR_X));              /* der(x) = -x, evaluated on demand */
    CHECK(get2(c, VR_Y) == get2(c, VR_X));                /* output */
    CHECK(fabs(get2(c, VR_TIME) - 1.0) < 1e-14);          /* time (listed in this model's table) */
    CHECK(fmi2GetRealStatus(c, fmi2LastSuccessfulTime, &last) == fmi2OK && fabs(last - 1.0) < 1e-14);

    /* inputs and tunable parameters between steps: x' = 1 - x from x(1) */
    {
        double x1 = get2(c, VR_X);
        CHECK(set2(c, VR_U, 1.0) == fmi2OK);
        CHECK(fmi2DoStep(c, t, 0.5, fmi2True) == fmi2OK);
        CHECK(fabs(get2(c, VR_X) - (1.0 + (x1 - 1.0) * exp(-0.5))) < 1e-10);
        CHECK(set2(c, VR_B, 2.0) == fmi2OK);
    }

    /* what may not be set in Step Mode, and bad arguments */
    CHECK(set2(c, VR_X, 1.0) == fmi2Error);               /* state after initialization */
    CHECK(set2(c, VR_DX, 1.0) == fmi2Error);              /* computed */
    CHECK(set2(c, VR_TIME, 1.0) == fmi2Error);            /* time */
    CHECK(set2(c, 99, 1.0) == fmi2Error);                 /* unknown */
    CHECK(set2(c, VR_B, NAN) == fmi2Error);               /* non-finite */
    CHECK(isnan(get2(c, 99)));                            /* unknown: get2 returns NaN on error */
    CHECK(fmi2GetReal(c, NULL, 1, &last) == fmi2Error);
    CHECK(fmi2GetReal(c, NULL, 0, NULL) == fmi2OK);       /* empty request */
    CHECK(fmi2DoStep(c, 123.0, 0.1, fmi2True) == fmi2Error);  /* wrong communication point */
    CHECK(fmi2DoStep(c, 1.5, -0.1, fmi2True) == fmi2Error);   /* negative step */
    {
        fmi2ValueReference vr = VR_X;
        fmi2Integer iv;
        fmi2Boolean bv;
        CHECK(fmi2GetInteger(c, &vr, 1, &iv) == fmi2Error);
        CHECK(fmi2GetInteger(c, &vr, 0, &iv) == fmi2OK);
        CHECK(fmi2GetBooleanStatus(c, fmi2Terminated, &bv) == fmi2OK && bv == fmi2False);
        CHECK(fmi2GetBooleanStatus(c, fmi2Terminated, NULL) == fmi2Error);
    }
    CHECK(fmi2GetDerivatives(c, &last, 1) == fmi2Error);  /* Model Exchange only */
    CHECK(fmi2GetFMUstate(c, NULL) == fmi2Error);         /* NULL argument */
    CHECK(fmi2CancelStep(c) == fmi2Error);

    /* debug logging: unknown category rejected; logDebug reports integrator statistics */
    {
        fmi2String bad[] = {"logNonsense"}, debug[] = {"logDebug"};
        int before = n_debug;
        CHECK(fmi2SetDebugLogging(c, fmi2True, 1, bad) == fmi2Error);
        CHECK(fmi2SetDebugLogging(c, fmi2True, 1, debug) == fmi2OK);
        CHECK(fmi2DoStep(c, t + 0.5, 0.1, fmi2True) == fmi2OK);
        CHECK(n_debug > before);
    }

    CHECK(fmi2Terminate(c) == fmi2OK);
    CHECK(fmi2DoStep(c, t + 0.6, 0.1, fmi2True) == fmi2Error); /* terminated */
    CHECK(!isnan(get2(c, VR_X)));                              /* getters still allowed */
    fmi2FreeInstance(c);
}

static void test_fmi2_cs_blowup(void)
{
    /* x' = x^2, x(0) = 1: x = 1/(1 - t); the model fails for x > xmax = 1e6 */
    const unsigned int vrs[] = {VR_A, VR_B};
    const double values[] = {1.0, 0.0};
    fmi2Component c = cs2(1e-8, 2, vrs, values);
    double last = -1.0;

    CHECK(c != NULL);
    if (c == NULL)
        return;
    CHECK(fmi2DoStep(c, 0.0, 0.5, fmi2True) == fmi2OK);
    CHECK(fabs(get2(c, VR_X) - 2.0) < 1e-7);
    CHECK(fmi2DoStep(c, 0.5, 0.5, fmi2True) == fmi2Error);
    CHECK(fmi2GetRealStatus(c, fmi2LastSuccessfulTime, &last) == fmi2OK);
    CHECK(last > 0.999 && last < 1.0);
    CHECK(strstr(last_error, "100 % of the admissible range") != NULL); /* model message, '%' escaped */
    if (verbose)
        printf("    blow-up: last successful time %.17g: %s\n", last, last_error);
    CHECK(fmi2DoStep(c, last, 0.1, fmi2True) == fmi2Error); /* Error mode */
    CHECK(fmi2Terminate(c) == fmi2Error);                   /* not from Error mode */
    CHECK(!isnan(get2(c, VR_X)));                           /* getters allowed for diagnosis */
    CHECK(fmi2Reset(c) == fmi2OK);                          /* back to the start values */
    CHECK(get2(c, VR_A) != get2(c, VR_A));                  /* no getters in Instantiated */
    CHECK(fmi2EnterInitializationMode(c) == fmi2OK);
    CHECK(get2(c, VR_X) == 1.0 && get2(c, VR_A) == 0.0);
    CHECK(fmi2ExitInitializationMode(c) == fmi2OK);
    CHECK(fmi2DoStep(c, 0.0, 1.0, fmi2True) == fmi2OK);     /* default model is harmless again */
    fmi2FreeInstance(c);
}

static void test_fmi2_cs_stiff(void)
{
    /* x' = -1e7 x: explicit DOPRI5 needs ~3e7 steps for [0, 10] -> the 10^6 limit */
    const unsigned int vrs[] = {VR_B};
    const double values[] = {1e7};
    fmi2Component c = cs2(1e-8, 1, vrs, values);
    double last = -1.0;

    CHECK(c != NULL);
    if (c == NULL)
        return;
    CHECK(fmi2DoStep(c, 0.0, 10.0, fmi2True) == fmi2Error);
    CHECK(strstr(last_error, "maximum number of integration steps") != NULL);
    CHECK(fmi2GetRealStatus(c, fmi2LastSuccessfulTime, &last) == fmi2OK && last > 0.0 && last < 10.0);
    fmi2FreeInstance(c);
}

static void test_fmi2_me(void)
{
    fmi2Component c = fmi2Instantiate("me", fmi2ModelExchange, TOKEN, "", &callbacks2, fmi2False, fmi2False);
    fmi2EventInfo info;
    fmi2Boolean enter_event = fmi2True, terminate = fmi2True;
    double x = 2.0, dx = 0.0, nominal = 0.0, x2[2] = {1.0, 1.0};

    CHECK(c != NULL);
    if (c == NULL)
        return;
    CHECK(fmi2GetNominalsOfContinuousStates(c, &nominal, 1) == fmi2OK && nominal == 1.0);
    CHECK(fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2False, 0.0) == fmi2OK);
    CHECK(fmi2EnterInitializationMode(c) == fmi2OK);
    CHECK(fmi2GetDerivatives(c, &dx, 1) == fmi2OK && dx == -1.0);
    CHECK(fmi2ExitInitializationMode(c) == fmi2OK);
    CHECK(fmi2NewDiscreteStates(c, &info) == fmi2OK);
    CHECK(!info.newDiscreteStatesNeeded && !info.terminateSimulation && !info.nextEventTimeDefined &&
          !info.valuesOfContinuousStatesChanged && !info.nominalsOfContinuousStatesChanged);
    CHECK(fmi2NewDiscreteStates(c, NULL) == fmi2Error);
    CHECK(fmi2SetContinuousStates(c, &x, 1) == fmi2Error); /* not in Event Mode */
    CHECK(fmi2EnterContinuousTimeMode(c) == fmi2OK);
    CHECK(fmi2SetTime(c, 0.5) == fmi2OK);
    CHECK(fmi2SetContinuousStates(c, &x, 1) == fmi2OK);
    CHECK(fmi2GetDerivatives(c, &dx, 1) == fmi2OK && dx == -2.0);
    CHECK(get2(c, VR_DX) == -2.0 && get2(c, VR_TIME) == 0.5);
    CHECK(fmi2GetEventIndicators(c, NULL, 0) == fmi2OK);
    CHECK(fmi2GetEventIndicators(c, &dx, 1) == fmi2Error);
    CHECK(fmi2SetContinuousStates(c, x2, 2) == fmi2Error);  /* wrong count */
    CHECK(fmi2GetContinuousStates(c, NULL, 1) == fmi2Error);
    CHECK(fmi2CompletedIntegratorStep(c, fmi2True, &enter_event, &terminate) == fmi2OK);
    CHECK(enter_event == fmi2False && terminate == fmi2False);
    CHECK(set2(c, VR_X, 3.0) == fmi2Error);                  /* states only via SetContinuousStates */
    CHECK(set2(c, VR_B, 2.0) == fmi2Error);                  /* parameters only in Event Mode */
    CHECK(set2(c, VR_U, 1.0) == fmi2OK);                     /* inputs always */
    CHECK(fmi2DoStep(c, 0.5, 0.1, fmi2True) == fmi2Error);   /* Co-Simulation only */
    CHECK(fmi2EnterEventMode(c) == fmi2OK);
    CHECK(set2(c, VR_B, 2.0) == fmi2OK);
    CHECK(set2(c, VR_XMAX, 1.5) == fmi2OK);                  /* x = 2 is now inadmissible */
    CHECK(fmi2GetDerivatives(c, &dx, 1) == fmi2Error);       /* model failure -> Error mode */
    CHECK(strstr(last_error, "exceeds xmax") != NULL);
    CHECK(fmi2SetTime(c, 0.6) == fmi2Error);                 /* not in Error mode */
    CHECK(fmi2Reset(c) == fmi2OK);
    fmi2FreeInstance(c);
}

static void test_fmi2_misuse(void)
{
    fmi2ValueReference vr = VR_X;
    double v = 0.0;
    fmi2CallbackFunctions no_alloc = {logger2, NULL, NULL, NULL, NULL};
    fmi2Component c;

    /* NULL instance: fmi2Error, no crash */
    CHECK(fmi2GetReal(NULL, &vr, 1, &v) == fmi2Error);
    CHECK(fmi2SetReal(NULL, &vr, 1, &v) == fmi2Error);
    CHECK(fmi2DoStep(NULL, 0.0, 0.1, fmi2True) == fmi2Error);
    CHECK(fmi2EnterInitializationMode(NULL) == fmi2Error);
    CHECK(fmi2GetDerivatives(NULL, &v, 1) == fmi2Error);
    CHECK(fmi2SetDebugLogging(NULL, fmi2True, 0, NULL) == fmi2Error);
    CHECK(fmi2GetFMUstate(NULL, NULL) == fmi2Error);
    fmi2FreeInstance(NULL);

    /* instantiation failures */
    n_errors = 0;
    CHECK(fmi2Instantiate("x", fmi2CoSimulation, "{wrong}", "", &callbacks2, fmi2False, fmi2False) == NULL);
    CHECK(n_errors == 1 && strstr(last_error, "GUID") != NULL);
    CHECK(fmi2Instantiate("", fmi2CoSimulation, TOKEN, "", &callbacks2, fmi2False, fmi2False) == NULL);
    CHECK(fmi2Instantiate(NULL, fmi2CoSimulation, TOKEN, "", &callbacks2, fmi2False, fmi2False) == NULL);
    CHECK(fmi2Instantiate("x", fmi2CoSimulation, NULL, "", &callbacks2, fmi2False, fmi2False) == NULL);
    CHECK(fmi2Instantiate("x", (fmi2Type)7, TOKEN, "", &callbacks2, fmi2False, fmi2False) == NULL);
    CHECK(fmi2Instantiate("x", fmi2CoSimulation, TOKEN, "", NULL, fmi2False, fmi2False) == NULL);

    /* without memory callbacks the runtime uses calloc/free */
    c = fmi2Instantiate("x", fmi2CoSimulation, TOKEN, NULL, &no_alloc, fmi2False, fmi2True);
    CHECK(c != NULL);
    CHECK(fmi2ExitInitializationMode(c) == fmi2Error);   /* wrong order */
    CHECK(fmi2SetupExperiment(c, fmi2True, -1.0, 0.0, fmi2False, 0.0) == fmi2Error);
    CHECK(fmi2SetupExperiment(c, fmi2False, 0.0, 0.0, fmi2True, -1.0) == fmi2Error);
    CHECK(fmi2SetupExperiment(c, fmi2True, 1e-20, 0.0, fmi2True, 1.0) == fmi2OK); /* clamped, warning */
    fmi2FreeInstance(c);

    CHECK(strcmp(fmi2GetVersion(), "2.0") == 0);
    CHECK(strcmp(fmi2GetTypesPlatform(), "default") == 0);
}

/* ---------------------------------------------------------------------------------------------- */

/* A Co-Simulation instance with eventModeUsed, through Initialization Mode into Event Mode (NULL, a
 * failed check, if it cannot be instantiated). */
static fmi3Instance cs3_in_event_mode(const char *name)
{
    fmi3Instance cs = fmi3InstantiateCoSimulation(name, TOKEN, NULL, fmi3False, fmi3False, fmi3True, fmi3False,
                                                  NULL, 0, NULL, logger3, NULL);
    CHECK(cs != NULL);
    if (cs != NULL) {
        CHECK(fmi3EnterInitializationMode(cs, fmi3False, 0.0, 0.0, fmi3False, 0.0) == fmi3OK);
        CHECK(fmi3ExitInitializationMode(cs) == fmi3OK);
    }
    return cs;
}

/* Ten doSteps of 0.05 from t0, recording time and x after each in out[0..20). */
static void record_steps3(fmi3Instance cs, double t0, double *out)
{
    const fmi3ValueReference vrs[2] = {VR_TIME, VR_X};
    fmi3Boolean ev, term, early;
    double last;
    int i;
    for (i = 0; i < 10; i++) {
        CHECK(fmi3DoStep(cs, t0 + 0.05 * i, 0.05, fmi3False, &ev, &term, &early, &last) == fmi3OK);
        CHECK(fmi3GetFloat64(cs, vrs, 2, out + 2 * i, 2) == fmi3OK);
    }
}

static void test_fmi3(void)
{
    fmi3Instance cs, me;
    fmi3ValueReference vrs[2] = {VR_TIME, VR_X};
    double values[2] = {0.0, 0.0}, last = -1.0, dx = 0.0;
    fmi3Boolean ev = fmi3True, term = fmi3True, early = fmi3True, need = fmi3True, nom = fmi3True,
                vals = fmi3True, next_def = fmi3True;
    size_t n = 99;
    int i;

    CHECK(strcmp(fmi3GetVersion(), "3.0") == 0);
    CHECK(fmi3InstantiateCoSimulation("cs", "{wrong}", NULL, fmi3False, fmi3False, fmi3False, fmi3False, NULL, 0,
                                      NULL, logger3, NULL) == NULL);
    CHECK(fmi3InstantiateScheduledExecution("se", TOKEN, NULL, fmi3False, fmi3False, NULL, logger3, NULL, NULL,
                                            NULL) == NULL);

    /* Co-Simulation */
    cs = fmi3InstantiateCoSimulation("cs", TOKEN, NULL, fmi3False, fmi3False, fmi3False, fmi3False, NULL, 0, NULL,
                                     logger3, NULL);
    CHECK(cs != NULL);
    if (cs == NULL)
        return;
    CHECK(fmi3GetNumberOfContinuousStates(cs, &n) == fmi3OK && n == 1);
    CHECK(fmi3EnterInitializationMode(cs, fmi3True, 1e-10, 0.0, fmi3False, 0.0) == fmi3OK);
    CHECK(fmi3GetFloat64(cs, vrs, 2, values, 1) == fmi3Error); /* nValues != nValueReferences */
    CHECK(fmi3ExitInitializationMode(cs) == fmi3OK);
    CHECK(fmi3EnterEventMode(cs) == fmi3Error);                /* eventModeUsed = false */
    for (i = 0; i < 4; i++)
        CHECK(fmi3DoStep(cs, 0.25 * i, 0.25, fmi3True, &ev, &term, &early, &last) == fmi3OK);
    CHECK(!ev && !term && !early && fabs(last - 1.0) < 1e-14);
    CHECK(fmi3GetFloat64(cs, vrs, 2, values, 2) == fmi3OK);
    CHECK(fabs(values[0] - 1.0) < 1e-14 && fabs(values[1] - exp(-1.0)) < 1e-10);
    CHECK(fmi3DoStep(cs, 1.0, 0.25, fmi3True, NULL, &term, &early, &last) == fmi3Error);
    {
        fmi3Int32 iv[1];
        fmi3ValueReference vr = VR_X;
        CHECK(fmi3GetInt32(cs, &vr, 1, iv, 1) == fmi3Error);
        CHECK(fmi3GetInt32(cs, &vr, 0, iv, 0) == fmi3OK);
        CHECK(fmi3GetClock(cs, &vr, 1, NULL) == fmi3Error);
        CHECK(fmi3GetFMUState(cs, NULL) == fmi3Error);
        CHECK(fmi3GetDirectionalDerivative(cs, NULL, 0, NULL, 0, NULL, 0, NULL, 0) == fmi3Error);
        CHECK(fmi3EnterConfigurationMode(cs) == fmi3Error);
    }
    /* failure inside doStep: parameters are tunable in Step Mode */
    {
        fmi3ValueReference p[2] = {VR_A, VR_B};
        double pv[2] = {1.0, 0.0};
        CHECK(fmi3SetFloat64(cs, p, 2, pv, 2) == fmi3OK);
        CHECK(fmi3DoStep(cs, 1.0, 5.0, fmi3True, &ev, &term, &early, &last) == fmi3Error);
        CHECK(last > 1.0 && last < 1.0 + 1.0 / exp(-1.0)); /* x = 1/(1/x1 - (t - 1)) blows up */
        CHECK(strstr(last_error, "exceeds xmax") != NULL);
    }
    CHECK(fmi3Terminate(cs) == fmi3Error); /* Error mode */
    CHECK(fmi3Reset(cs) == fmi3OK);
    fmi3FreeInstance(cs);

    /* Co-Simulation with eventModeUsed: passes through Event Mode */
    cs = cs3_in_event_mode("cs");
    if (cs != NULL) {
        CHECK(fmi3DoStep(cs, 0.0, 0.1, fmi3True, &ev, &term, &early, &last) == fmi3Error); /* Event Mode */
        CHECK(fmi3UpdateDiscreteStates(cs, &need, &term, &nom, &vals, &next_def, &last) == fmi3OK);
        CHECK(fmi3EnterStepMode(cs) == fmi3OK);
        CHECK(fmi3DoStep(cs, 0.0, 0.1, fmi3True, &ev, &term, &early, &last) == fmi3OK);
        CHECK(fmi3EnterEventMode(cs) == fmi3OK);
        CHECK(fmi3EnterStepMode(cs) == fmi3OK);
        CHECK(fmi3Terminate(cs) == fmi3OK);
        fmi3FreeInstance(cs);
    }

    /* Model Exchange */
    me = fmi3InstantiateModelExchange("me", TOKEN, NULL, fmi3False, fmi3False, NULL, logger3);
    CHECK(me != NULL);
    if (me == NULL)
        return;
    CHECK(fmi3EnterInitializationMode(me, fmi3False, 0.0, 2.0, fmi3False, 0.0) == fmi3OK);
    CHECK(fmi3GetFloat64(me, vrs, 1, values, 1) == fmi3OK && values[0] == 2.0); /* time = startTime */
    CHECK(fmi3ExitInitializationMode(me) == fmi3OK);
    CHECK(fmi3UpdateDiscreteStates(me, &need, &term, &nom, &vals, &next_def, &last) == fmi3OK);
    CHECK(!need && !term && !nom && !vals && !next_def);
    CHECK(fmi3UpdateDiscreteStates(me, NULL, &term, &nom, &vals, &next_def, &last) == fmi3Error);
    CHECK(fmi3EnterContinuousTimeMode(me) == fmi3OK);
    CHECK(fmi3GetNumberOfEventIndicators(me, &n) == fmi3OK && n == 0);
    CHECK(fmi3GetEventIndicators(me, NULL, 0) == fmi3OK);
    values[0] = 3.0;
    CHECK(fmi3SetContinuousStates(me, values, 1) == fmi3OK);
    CHECK(fmi3GetContinuousStateDerivatives(me, &dx, 1) == fmi3OK && dx == -3.0);
    CHECK(fmi3GetContinuousStates(me, values, 1) == fmi3OK && values[0] == 3.0);
    CHECK(fmi3GetNominalsOfContinuousStates(me, values, 1) == fmi3OK && values[0] == 1.0);
    CHECK(fmi3CompletedIntegratorStep(me, fmi3True, &ev, &term) == fmi3OK && !ev && !term);
    CHECK(fmi3SetTime(me, 2.5) == fmi3OK);
    CHECK(fmi3DoStep(me, 2.5, 0.1, fmi3True, &ev, &term, &early, &last) == fmi3Error);
    CHECK(fmi3EnterStepMode(me) == fmi3Error);
    CHECK(fmi3EnterEventMode(me) == fmi3OK);
    CHECK(fmi3Terminate(me) == fmi3OK);
    fmi3FreeInstance(me);

    /* NULL instance */
    CHECK(fmi3GetFloat64(NULL, vrs, 1, values, 1) == fmi3Error);
    CHECK(fmi3DoStep(NULL, 0.0, 0.1, fmi3True, &ev, &term, &early, &last) == fmi3Error);
    fmi3FreeInstance(NULL);
}

/* FMU state through the FMI 3 API: rollback, serialization, rejected buffers, Model Exchange. */
static void test_fmi3_state(void)
{
    fmi3Instance cs = fmi3InstantiateCoSimulation("cs", TOKEN, NULL, fmi3False, fmi3False, fmi3False, fmi3False,
                                                  NULL, 0, NULL, logger3, NULL);
    fmi3Instance other;
    fmi3FMUState s = NULL, s2 = NULL;
    fmi3ValueReference vrs[2] = {VR_TIME, VR_X}, vu = VR_U;
    fmi3Boolean ev, term, early;
    double a[20], b[20], last, u = 0.5, t0[2];
    fmi3Byte *buf;
    size_t size = 0;
    int i;

    CHECK(cs != NULL);
    if (cs == NULL)
        return;
    CHECK(fmi3EnterInitializationMode(cs, fmi3True, 1e-10, 0.0, fmi3True, 5.0) == fmi3OK);
    CHECK(fmi3ExitInitializationMode(cs) == fmi3OK);
    for (i = 0; i < 7; i++)
        CHECK(fmi3DoStep(cs, 0.05 * i, 0.05, fmi3True, &ev, &term, &early, &last) == fmi3OK);
    CHECK(fmi3GetFloat64(cs, vrs, 2, t0, 2) == fmi3OK);
    CHECK(fmi3GetFMUState(cs, &s) == fmi3OK && s != NULL);
    /* an input change after the state was taken: part of the state, undone by setting it */
    CHECK(fmi3SetFloat64(cs, &vu, 1, &u, 1) == fmi3OK);
    record_steps3(cs, t0[0], a);
    CHECK(fmi3SetFMUState(cs, s) == fmi3OK);
    CHECK(fmi3SetFloat64(cs, &vu, 1, &u, 1) == fmi3OK);
    record_steps3(cs, t0[0], b);
    CHECK(memcmp(a, b, sizeof a) == 0);

    /* serialize, deserialize in a second instance, continue there: the same trajectory */
    CHECK(fmi3SerializedFMUStateSize(cs, s, &size) == fmi3OK && size > 0);
    buf = (fmi3Byte *)malloc(size);
    if (buf == NULL)
        return;
    CHECK(fmi3SerializeFMUState(cs, s, buf, size) == fmi3OK);
    other = fmi3InstantiateCoSimulation("other", TOKEN, NULL, fmi3False, fmi3False, fmi3False, fmi3False, NULL, 0,
                                        NULL, logger3, NULL);
    CHECK(other != NULL);
    if (other != NULL) {
        CHECK(fmi3DeserializeFMUState(other, buf, size, &s2) == fmi3OK);
        CHECK(fmi3SetFMUState(other, s2) == fmi3OK); /* from Instantiated into Step Mode */
        CHECK(fmi3SetFloat64(other, &vu, 1, &u, 1) == fmi3OK);
        record_steps3(other, t0[0], b);
        CHECK(memcmp(a, b, sizeof a) == 0);
        CHECK(fmi3FreeFMUState(other, &s2) == fmi3OK && s2 == NULL);
        fmi3FreeInstance(other);
    }
    /* a corrupted buffer: an error with a message, no state */
    buf[size / 3] ^= 0x20;
    n_errors = 0;
    CHECK(fmi3DeserializeFMUState(cs, buf, size, &s2) == fmi3Error && s2 == NULL);
    CHECK(n_errors == 1 && strstr(last_error, "fmi3DeserializeFMUState") != NULL &&
          strstr(last_error, "corrupted") != NULL);
    CHECK(fmi3DeserializeFMUState(cs, buf, 0, &s2) == fmi3Error && s2 == NULL);
    /* a Co-Simulation state in a Model Exchange instance */
    other = fmi3InstantiateModelExchange("me", TOKEN, NULL, fmi3False, fmi3False, NULL, logger3);
    CHECK(other != NULL);
    if (other != NULL) {
        CHECK(fmi3SetFMUState(other, s) == fmi3Error && strstr(last_error, "Co-Simulation state") != NULL);
        fmi3FreeInstance(other);
    }
    /* Event Mode is not a mode of this Co-Simulation instance (eventModeUsed = false) */
    other = cs3_in_event_mode("ev");
    if (other != NULL) {
        CHECK(fmi3GetFMUState(other, &s2) == fmi3OK);
        CHECK(fmi3SetFMUState(cs, s2) == fmi3Error && strstr(last_error, "mode") != NULL);
        CHECK(fmi3SetFMUState(other, s2) == fmi3OK);
        CHECK(fmi3FreeFMUState(other, &s2) == fmi3OK);
        fmi3FreeInstance(other);
    }
    CHECK(fmi3FreeFMUState(cs, &s) == fmi3OK && s == NULL);
    CHECK(fmi3FreeFMUState(cs, NULL) == fmi3Error);
    free(buf);
    fmi3FreeInstance(cs);
}

int main(int argc, char **argv)
{
    verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    test_fmi2_cs_accuracy();
    test_fmi2_cs_blowup();
    test_fmi2_cs_stiff();
    test_fmi2_me();
    test_fmi2_misuse();
    test_fmi3();
    test_fmi3_state();
    printf("test_runtime: %d failure(s)\n", failures);
    return failures;
}
