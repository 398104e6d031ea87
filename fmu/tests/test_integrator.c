/* Co-Simulation integrators (nhb_core.c: Dormand-Prince 5(4) and DOP853) on the harmonic oscillator
 * of model_oscillator.c, through the FMI 2 API, against its closed form x = cos(w t):
 *
 *   - global error at the communication points below a small multiple of the tolerance, for
 *     tolerances 1e-6 .. 1e-12 and communication steps 0.01 .. 1, and converging with the tolerance;
 *   - step and evaluation counts from the logDebug statistics: FSAL (6 evaluations per DOPRI5 step,
 *     12 per accepted DOP853 step), the first stage reused across doSteps, the step size carried over;
 *   - the first stage re-evaluated after an input or parameter change, and the new dynamics followed;
 *   - the cached state derivative after a doStep equal to a fresh evaluation;
 *   - a model failure inside a step: Error, logged message, last successful time;
 *   - without -DNHB_CS_METHOD: the automatic choice (DOPRI5 at small communication steps and loose
 *     tolerances, DOP853 at large steps and tight tolerances).
 *
 * check_runtime.py builds it three times (with sanitizers): -DNHB_CS_METHOD=0 (DOPRI5 only),
 * -DNHB_CS_METHOD=1 (DOP853 only), and without (automatic). Prints one line per failed check and
 * the measured errors (-v: also every log message); exits with the number of failures.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "nhb_core.h"

#define TOKEN "{oscillator-test-model}"
enum { VR_TIME, VR_X, VR_V, VR_DV, VR_W, VR_XMAX, VR_U, VR_DX };

#if defined(NHB_CS_METHOD)
#define FORCED NHB_CS_METHOD /* 0: DOPRI5, 1: DOP853 */
#else
#define FORCED (-1)
#endif

static int failures = 0, verbose = 0;
static char last_error[4096];

/* statistics of the last doStep (from its logDebug message) and totals */
typedef struct {
    long steps_acc, steps_rej, evals, dop853_calls, dopri5_calls;
} stats;
static stats last, total;

#define CHECK(cond) check((cond) != 0, #cond, __LINE__)

static void check(int ok, const char *what, int line)
{
    if (!ok) {
        printf("FAIL (line %d): %s\n", line, what);
        failures++;
    }
}

static void logger(fmi2ComponentEnvironment env, fmi2String name, fmi2Status status, fmi2String category,
                   fmi2String message, ...)
{
    char buf[4096];
    const char *p;
    va_list ap;
    (void)env;
    (void)name;
    (void)category;
    va_start(ap, message);
    vsnprintf(buf, sizeof buf, message, ap);
    va_end(ap);
    if (verbose)
        printf("    log: %s\n", buf);
    if (status >= fmi2Error)
        snprintf(last_error, sizeof last_error, "%s", buf);
    /* "fmi2DoStep: t = a -> b: <method>, N accepted and M rejected steps, E model evaluations, ..." */
    if (status == fmi2OK && (p = strstr(buf, " accepted and ")) != NULL) {
        const char *q = p;
        long acc = 0, rej = 0, ev = 0;
        while (q > buf && q[-1] >= '0' && q[-1] <= '9')
            q--;
        if (sscanf(q, "%ld accepted and %ld rejected steps, %ld model evaluations", &acc, &rej, &ev) == 3) {
            int is853 = strstr(buf, "DOP853,") != NULL;
            last.steps_acc = acc;
            last.steps_rej = rej;
            last.evals = ev;
            last.dop853_calls = is853;
            last.dopri5_calls = !is853;
            total.steps_acc += acc;
            total.steps_rej += rej;
            total.evals += ev;
            total.dop853_calls += is853;
            total.dopri5_calls += !is853;
        }
    }
}

static const fmi2CallbackFunctions callbacks = {logger, calloc, free, NULL, NULL};

static double get(fmi2Component c, unsigned int vr)
{
    double v = NAN;
    fmi2ValueReference r = vr;
    if (fmi2GetReal(c, &r, 1, &v) != fmi2OK)
        return NAN;
    return v;
}

static fmi2Status set(fmi2Component c, unsigned int vr, double value)
{
    fmi2ValueReference r = vr;
    return fmi2SetReal(c, &r, 1, &value);
}

/* A Co-Simulation instance with debug logging (the step statistics), initialized at tolerance tol. */
static fmi2Component instance(double tol)
{
    fmi2Component c = fmi2Instantiate("osc", fmi2CoSimulation, TOKEN, "", &callbacks, fmi2False, fmi2True);
    if (c == NULL)
        return NULL;
    CHECK(fmi2SetupExperiment(c, fmi2True, tol, 0.0, fmi2False, 0.0) == fmi2OK);
    CHECK(fmi2EnterInitializationMode(c) == fmi2OK);
    CHECK(fmi2ExitInitializationMode(c) == fmi2OK);
    memset(&total, 0, sizeof total);
    return c;
}

/* Error of (x, v) against the oscillation x0 cos(w s) + v0/w sin(w s), s = t - t0, in units of the
 * amplitude. */
static double error_vs(double x, double v, double w, double t, double t0, double x0, double v0)
{
    double s = t - t0, amp = sqrt(x0 * x0 + (v0 / w) * (v0 / w));
    double xe = x0 * cos(w * s) + v0 / w * sin(w * s), ve = -x0 * w * sin(w * s) + v0 * cos(w * s);
    return fmax(fabs(x - xe), fabs(v - ve) / w) / amp;
}

/* ---------------------------------------------------------------------------------------------- */

/* Max error over [0, n dt] at tolerance tol; the totals of the step statistics are left in `total`. */
static double run(double tol, double dt, int n)
{
    fmi2Component c = instance(tol);
    const double w = NHB_P0[0];
    double err = 0.0;
    int i;

    CHECK(c != NULL);
    if (c == NULL)
        return INFINITY;
    for (i = 0; i < n; i++) {
        if (fmi2DoStep(c, i * dt, dt, fmi2True) != fmi2OK) {
            CHECK(!"doStep failed");
            break;
        }
        err = fmax(err, error_vs(get(c, VR_X), get(c, VR_V), w, (i + 1) * dt, 0.0, 1.0, 0.0));
    }
    fmi2FreeInstance(c);
    return err;
}

static void test_convergence(void)
{
    const double tols[] = {1e-6, 1e-8, 1e-10, 1e-12}, dts[] = {0.01, 0.1, 1.0};
    const double horizon = 10.0; /* 10 periods */
    size_t it, id;

    for (id = 0; id < sizeof dts / sizeof dts[0]; id++) {
        double prev = INFINITY;
        for (it = 0; it < sizeof tols / sizeof tols[0]; it++) {
            int n = (int)(horizon / dts[id] + 0.5);
            double err = run(tols[it], dts[id], n);
            printf("    tol %-6g dt %-5g: max error %.2e = %5.1f tol; %5ld steps (%ld rejected), %6ld "
                   "evaluations, DOP853 in %ld of %d doSteps\n", tols[it], dts[id], err, err / tols[it],
                   total.steps_acc + total.steps_rej, total.steps_rej, total.evals, total.dop853_calls, n);
            /* global error over 10 periods within a small multiple of the (local) tolerance */
            CHECK(err < 30.0 * tols[it]);
            /* where the step size, not the communication step, limits the steps (dt = 1: about 30
             * steps per interval), the error is proportional to the tolerance: it converges at the
             * tolerance, and the tolerance is not wasted on needlessly small steps */
            if (dts[id] == 1.0) {
                CHECK(err > 0.3 * tols[it]);
                CHECK(err < 0.03 * prev);
            }
            prev = err;
            if (FORCED == 0)
                CHECK(total.dop853_calls == 0 && total.dopri5_calls == n);
            if (FORCED == 1)
                CHECK(total.dopri5_calls == 0 && total.dop853_calls == n);
            /* a correct 8th-order method needs few steps (a coefficient error would cost many) */
            if (FORCED == 1 && tols[it] == 1e-10 && dts[id] == 1.0)
                CHECK(total.steps_acc + total.steps_rej < 400);
            if (FORCED == 0 && tols[it] == 1e-10 && dts[id] == 1.0)
                CHECK(total.steps_acc + total.steps_rej < 2500);
        }
    }
}

/* Evaluations per doStep: FSAL within and across doSteps, step size carried over. */
static void test_evaluation_counts(void)
{
    fmi2Component c = instance(1e-6);
    const int per_step = FORCED == 1 ? 12 : 6, per_rejected = FORCED == 1 ? 11 : 6;
    const double dt = 0.01;
    double t = 0.0;
    int i;

    if (FORCED < 0) { /* the counts below hold for one method at a time */
        fmi2FreeInstance(c);
        return;
    }
    CHECK(c != NULL);
    if (c == NULL)
        return;
    /* first doStep: k[0] from the cache of ExitInitializationMode, plus the initial-step estimate */
    CHECK(fmi2DoStep(c, t, dt, fmi2True) == fmi2OK);
    t += dt;
    CHECK(last.evals == 1 + per_step * last.steps_acc + per_rejected * last.steps_rej);
    /* later doSteps: no re-evaluation of k[0], no new initial step */
    memset(&total, 0, sizeof total);
    for (i = 0; i < 50; i++, t += dt) {
        CHECK(fmi2DoStep(c, t, dt, fmi2True) == fmi2OK);
        CHECK(last.evals == per_step * last.steps_acc + per_rejected * last.steps_rej);
    }
    /* at tolerance 1e-6 the step size carried over covers a 0.01 interval in one step */
    CHECK(total.steps_acc == 50 && total.steps_rej == 0);

    /* the cached derivative after a doStep is the model's value at the new state */
    {
        double x = get(c, VR_X), w = get(c, VR_W), dv = get(c, VR_DV);
        CHECK(dv == -w * w * x + 0.0);
        CHECK(get(c, VR_DX) == get(c, VR_V));
    }

    /* an input change: k[0] is evaluated again (one more evaluation), then FSAL again */
    CHECK(set(c, VR_U, 0.0) == fmi2OK);
    CHECK(fmi2DoStep(c, t, dt, fmi2True) == fmi2OK);
    t += dt;
    CHECK(last.evals == 1 + per_step * last.steps_acc + per_rejected * last.steps_rej);
    CHECK(fmi2DoStep(c, t, dt, fmi2True) == fmi2OK);
    t += dt;
    CHECK(last.evals == per_step * last.steps_acc + per_rejected * last.steps_rej);
    fmi2FreeInstance(c);
}

/* A parameter change between doSteps: the integrator follows the new dynamics at once. */
static void test_parameter_change(void)
{
    fmi2Component c = instance(1e-10);
    const double dt = 0.05, w1 = NHB_P0[0], w2 = 2.0 * NHB_P0[0];
    double t = 0.0, x0, v0, t0, err = 0.0;
    int i;

    CHECK(c != NULL);
    if (c == NULL)
        return;
    for (i = 0; i < 10; i++, t = i * dt)
        CHECK(fmi2DoStep(c, t, dt, fmi2True) == fmi2OK);
    CHECK(error_vs(get(c, VR_X), get(c, VR_V), w1, t, 0.0, 1.0, 0.0) < 1e-9);
    x0 = get(c, VR_X);
    v0 = get(c, VR_V);
    t0 = t;
    CHECK(set(c, VR_W, w2) == fmi2OK);
    for (; i < 40; i++, t = i * dt) {
        CHECK(fmi2DoStep(c, t, dt, fmi2True) == fmi2OK);
        err = fmax(err, error_vs(get(c, VR_X), get(c, VR_V), w2, (i + 1) * dt, t0, x0, v0));
    }
    printf("    parameter change w -> 2w at t = %g: max error afterwards %.2e\n", t0, err);
    CHECK(err < 1e-9);
    fmi2FreeInstance(c);
}

/* The model fails inside a doStep: Error with the model's message, state at the last accepted step. */
static void test_failure(void)
{
    fmi2Component c = instance(1e-8);
    const double w = NHB_P0[0];
    double last_ok = -1.0, x, v;
    int i;

    CHECK(c != NULL);
    if (c == NULL)
        return;
    for (i = 0; i < 4; i++)
        CHECK(fmi2DoStep(c, i * 0.05, 0.05, fmi2True) == fmi2OK);
    /* x = cos(2 pi t) = 0.309 at t = 0.2 and reaches -0.5 at t = 1/3 */
    CHECK(set(c, VR_XMAX, 0.5) == fmi2OK);
    CHECK(fmi2DoStep(c, 0.2, 0.5, fmi2True) == fmi2Error);
    CHECK(strstr(last_error, "exceeds xmax") != NULL && strstr(last_error, "fmi2DoStep") != NULL);
    CHECK(fmi2GetRealStatus(c, fmi2LastSuccessfulTime, &last_ok) == fmi2OK);
    CHECK(last_ok > 0.2 && last_ok <= 1.0 / 3.0 + 1e-9);
    x = get(c, VR_X);
    v = get(c, VR_V);
    CHECK(fabs(x) <= 0.5 && error_vs(x, v, w, last_ok, 0.0, 1.0, 0.0) < 1e-6);
    if (verbose)
        printf("    failure: last successful time %.17g: %s\n", last_ok, last_error);
    CHECK(fmi2DoStep(c, last_ok, 0.1, fmi2True) == fmi2Error); /* Error mode */
    fmi2FreeInstance(c);
}

/* The automatic choice follows the cost: DOPRI5 where one of its steps covers an interval, DOP853
 * where many would be needed. Each method runs twice at the start (cold, then with a carried-over
 * step size); the method not in use is tried again every NHB_RK_RETRY doSteps. */
static void test_automatic_choice(void)
{
    const int n_small = 1000, n_large = 200;
    const long retries_small = n_small / NHB_RK_RETRY + 2, retries_large = n_large / NHB_RK_RETRY + 2;

    if (FORCED >= 0)
        return;
    run(1e-6, 0.01, n_small);
    printf("    automatic, tol 1e-6, dt 0.01: DOP853 in %ld of %d doSteps\n", total.dop853_calls, n_small);
    CHECK(total.dop853_calls <= retries_small);
    run(1e-11, 1.0, n_large);
    printf("    automatic, tol 1e-11, dt 1: DOPRI5 in %ld of %d doSteps\n", total.dopri5_calls, n_large);
    CHECK(total.dopri5_calls <= retries_large);
}

int main(int argc, char **argv)
{
    verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    printf("test_integrator (%s)\n", FORCED == 0 ? "DOPRI5 only" : FORCED == 1 ? "DOP853 only" : "automatic");
    test_convergence();
    test_evaluation_counts();
    test_parameter_change();
    test_failure();
    test_automatic_choice();
    printf("test_integrator: %d failure(s)\n", failures);
    return failures;
}
