/* C-level regression tests of the runtime's edges (issue 11), through the FMI 2 and FMI 3 APIs with
 * model_scalar.c (der(x) = a x^2 + b (c - x) + u; value references 0 time, 1 x, 2 der(x), 3 a, 4 b,
 * 5 c, 6 xmax, 7 u, 8 y):
 *
 *   - tolerances outside (0, 1) or not finite are rejected by SetupExperiment/EnterInitializationMode;
 *   - a serialized state whose fields are out of range (rtol = -1, a time before the start time, NaN
 *     in a cache marked valid, ...) is rejected even with a recomputed checksum, and the instance is
 *     unchanged; the same bytes with only the checksum recomputed are accepted (control);
 *   - FreeInstance frees the states the instance handed out (a counting allocator through FMI 2's
 *     callbacks; LeakSanitizer for FMI 3, whose runtime uses calloc/free);
 *   - a communication step of 1e308: integrated when the dynamics allow steps that large, else the
 *     step limit with that message, never "step size too small";
 *   - NaN/infinity in the state or derivatives at run time: Error with a message naming the variable
 *     (value reference) and the time (ME: SetContinuousStates, GetDerivatives; CS: DoStep).
 *
 * check_runtime.py builds it with -fsanitize=address,undefined. Exits with the number of failures.
 */
#include <float.h>
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
static char last_error[4096];
static int n_errors, n_warnings;

#define CHECK(cond) check((cond) != 0, #cond, __LINE__)

static void check(int ok, const char *what, int line)
{
    if (!ok) {
        printf("FAIL (line %d): %s\n    last error: %s\n", line, what, last_error);
        failures++;
    }
}

static void record(int status_error, int status_warning, const char *text)
{
    if (status_error) {
        n_errors++;
        snprintf(last_error, sizeof last_error, "%s", text);
    }
    if (status_warning)
        n_warnings++;
    if (verbose)
        printf("    log: %s\n", text);
}

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
    record(status >= fmi2Error, status == fmi2Warning, buf);
}

static void logger3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category, fmi3String message)
{
    (void)env;
    (void)category;
    record(status >= fmi3Error, status == fmi3Warning, message);
}

/* A counting allocator for the FMI 2 callbacks: allocations not yet freed. */
static long outstanding = 0;

static void *count_alloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (p != NULL)
        outstanding++;
    return p;
}

static void count_free(void *p)
{
    if (p != NULL)
        outstanding--;
    free(p);
}

static const fmi2CallbackFunctions callbacks2 = {logger2, count_alloc, count_free, NULL, NULL};

static fmi2Component cs2(double tol)
{
    fmi2Component c = fmi2Instantiate("cs", fmi2CoSimulation, TOKEN, "", &callbacks2, fmi2False, fmi2False);
    CHECK(c != NULL);
    if (c == NULL)
        return NULL;
    CHECK(fmi2SetupExperiment(c, fmi2True, tol, 0.0, fmi2False, 0.0) == fmi2OK);
    CHECK(fmi2EnterInitializationMode(c) == fmi2OK);
    return c;
}

/* ---------------------------------------------------------------------------------------------- */
/* Tolerances                                                                                     */
/* ---------------------------------------------------------------------------------------------- */

static void test_tolerance(void)
{
    const double bad[] = {1e300, 1.0, 1.5, INFINITY, NAN, 0.0, -1.0, -INFINITY};
    fmi2Component c = fmi2Instantiate("tol", fmi2CoSimulation, TOKEN, "", &callbacks2, fmi2False, fmi2False);
    fmi3Instance c3 = fmi3InstantiateCoSimulation("tol3", TOKEN, NULL, fmi3False, fmi3False, fmi3False, fmi3False,
                                                  NULL, 0, NULL, logger3, NULL);
    size_t i;

    CHECK(c != NULL && c3 != NULL);
    if (c == NULL || c3 == NULL)
        return;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        n_errors = 0;
        CHECK(fmi2SetupExperiment(c, fmi2True, bad[i], 0.0, fmi2False, 0.0) == fmi2Error);
        CHECK(n_errors == 1 && strstr(last_error, "tolerance") != NULL);
        n_errors = 0;
        CHECK(fmi3EnterInitializationMode(c3, fmi3True, bad[i], 0.0, fmi3False, 0.0) == fmi3Error);
        CHECK(n_errors == 1 && strstr(last_error, "tolerance") != NULL);
    }
    /* the rejected calls changed nothing: both instances still accept a good set-up */
    n_warnings = 0;
    CHECK(fmi2SetupExperiment(c, fmi2True, 1e-20, 0.0, fmi2False, 0.0) == fmi2OK); /* raised to 100 eps */
    CHECK(fmi2SetupExperiment(c, fmi2True, 0.5, 0.0, fmi2False, 0.0) == fmi2OK);
    CHECK(fmi2EnterInitializationMode(c) == fmi2OK && fmi2ExitInitializationMode(c) == fmi2OK);
    CHECK(fmi2DoStep(c, 0.0, 1.0, fmi2True) == fmi2OK);
    CHECK(fmi3EnterInitializationMode(c3, fmi3True, 1e-6, 0.0, fmi3False, 0.0) == fmi3OK);
    fmi2FreeInstance(c);
    fmi3FreeInstance(c3);
}

/* ---------------------------------------------------------------------------------------------- */
/* Serialized states with fields out of range                                                     */
/* ---------------------------------------------------------------------------------------------- */

/* The documented layout (nhb_state.c): a 32-byte header (magic, version, GUID length, size, 64-bit
 * FNV-1a checksum of everything but the checksum at [24, 32)), the GUID padded to 8 bytes, 9 array
 * sizes and 14 integer fields (int64), then the doubles, then (format version 2) the modes of the switched
 * elements, the switch count and the times of the latest switches. For model_scalar.c (NX 1, NP 4, NIN 1,
 * NV 1, NY 1, no multipliers, residuals or switched elements): */
#define GUID_PAD 24u /* strlen("{scalar-test-model}") = 19 -> 24 */
#define INTS (32u + GUID_PAD)
#define INT_AT(k) (INTS + 8u * (9u + (k))) /* k: 0 interface, 1 mode, 2 stop_time_defined, 3 rhs_valid,
                                              4 out_valid, 5 int_valid, 6 dense_method, 7 rk_last,
                                              8 + 3 i: rk_settled[i], rk_steps[i], rk_age[i] */
#define DBL_AT(k) (INTS + 8u * 23u + 8u * (k))
enum { D_TIME, D_START, D_STOP, D_RTOL, D_ATOL, D_TINT, D_DENSE_T0, D_DENSE_H, D_HNEXT, D_RKEVALS = 10,
       D_RKSPAN = 12, D_X = 14, D_P = 15, D_IN = 19, D_DX = 20, D_V = 21, D_Y = 22, D_XI = 23, D_FI = 24,
       D_DENSE = 25, D_EVENTS = 33, D_END = 34 }; /* D_EVENTS: the switch count (int64) */

static unsigned long long fnv1a(const unsigned char *p, size_t n, unsigned long long h)
{
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

static void recompute_checksum(unsigned char *buf, size_t size)
{
    unsigned long long h = fnv1a(buf, 24, 14695981039346656037ull);
    h = fnv1a(buf + 32, size - 32, h);
    memcpy(buf + 24, &h, sizeof h);
}

static void put_double(unsigned char *buf, size_t at, double v)
{
    memcpy(buf + at, &v, sizeof v);
}

static void put_int(unsigned char *buf, size_t at, long long v)
{
    memcpy(buf + at, &v, sizeof v);
}

static double get_double(const unsigned char *buf, size_t at)
{
    double v;
    memcpy(&v, buf + at, sizeof v);
    return v;
}

/* Deserialize buf with one double (or int) field changed and the checksum recomputed: Error naming
 * `field`, no state. */
static void expect_rejected(fmi2Component c, const unsigned char *good, size_t size, size_t at, int is_int,
                            double value, const char *field)
{
    unsigned char *buf = (unsigned char *)malloc(size);
    fmi2FMUstate s = NULL;
    if (buf == NULL)
        return;
    memcpy(buf, good, size);
    if (is_int)
        put_int(buf, at, (long long)value);
    else
        put_double(buf, at, value);
    recompute_checksum(buf, size);
    n_errors = 0;
    CHECK(fmi2DeSerializeFMUstate(c, (const fmi2Byte *)buf, size, &s) == fmi2Error && s == NULL);
    CHECK(n_errors == 1 && strstr(last_error, "invalid value") != NULL && strstr(last_error, field) != NULL);
    if (verbose || strstr(last_error, field) == NULL)
        printf("    %s = %g: %s\n", field, value, last_error);
    free(buf);
}

static void test_state_fields(void)
{
    fmi2Component c = cs2(1e-6), other;
    fmi2FMUstate s = NULL, s2 = NULL;
    unsigned char *good, *buf, *before, *after;
    size_t size = 0;
    double t = 0.0, x_before;
    int i;

    if (c == NULL)
        return;
    CHECK(fmi2ExitInitializationMode(c) == fmi2OK);
    /* steps that overshoot the communication points: the state carries a dense-output step */
    for (i = 0; i < 6; i++, t += 0.25)
        CHECK(fmi2DoStep(c, t, 0.25, fmi2True) == fmi2OK);
    CHECK(fmi2GetFMUstate(c, &s) == fmi2OK);
    CHECK(fmi2SerializedFMUstateSize(c, s, &size) == fmi2OK);
    CHECK(size == DBL_AT(D_END));
    good = (unsigned char *)malloc(size);
    buf = (unsigned char *)malloc(size);
    before = (unsigned char *)malloc(size);
    after = (unsigned char *)malloc(size);
    if (good == NULL || buf == NULL || before == NULL || after == NULL || size != DBL_AT(D_END))
        return;
    CHECK(fmi2SerializeFMUstate(c, s, (fmi2Byte *)good, size) == fmi2OK);
    /* the layout as the test reads it */
    CHECK(get_double(good, DBL_AT(D_RTOL)) == 1e-6 && get_double(good, DBL_AT(D_TIME)) == 1.5);
    CHECK(get_double(good, DBL_AT(D_P + 1)) == 1.0 && get_double(good, DBL_AT(D_P + 3)) == 1e6); /* b, xmax */
    CHECK(get_double(good, DBL_AT(D_TINT)) > 1.5); /* the last step ended past t = 1.5 */

    /* control: the checksum recomputed over unchanged bytes, and a NaN in a cache marked invalid */
    memcpy(buf, good, size);
    recompute_checksum(buf, size);
    CHECK(memcmp(buf, good, size) == 0);
    CHECK(fmi2DeSerializeFMUstate(c, (const fmi2Byte *)buf, size, &s2) == fmi2OK);
    put_int(buf, INT_AT(4), 0);              /* out_valid = 0 ... */
    put_double(buf, DBL_AT(D_Y), NAN);       /* ... so y may hold anything */
    recompute_checksum(buf, size);
    CHECK(fmi2DeSerializeFMUstate(c, (const fmi2Byte *)buf, size, &s2) == fmi2OK);

    /* fields out of range, each with a recomputed checksum */
    CHECK(fmi2SerializeFMUstate(c, s, (fmi2Byte *)before, size) == fmi2OK);
    x_before = get2(c, VR_X);
    expect_rejected(c, good, size, DBL_AT(D_RTOL), 0, -1.0, "rtol");
    expect_rejected(c, good, size, DBL_AT(D_RTOL), 0, 1e300, "rtol");
    expect_rejected(c, good, size, DBL_AT(D_RTOL), 0, 0.0, "rtol");
    expect_rejected(c, good, size, DBL_AT(D_ATOL), 0, -1e-8, "atol");
    expect_rejected(c, good, size, DBL_AT(D_TIME), 0, -1.0, "time");        /* before start_time 0 */
    expect_rejected(c, good, size, DBL_AT(D_TIME), 0, NAN, "time");
    expect_rejected(c, good, size, DBL_AT(D_START), 0, 2.0, "time");        /* start after time */
    expect_rejected(c, good, size, DBL_AT(D_TINT), 0, 1.0, "t_int");        /* behind time 1.5 */
    expect_rejected(c, good, size, DBL_AT(D_DENSE_H), 0, 0.0, "dense");     /* t_int > time: in use */
    expect_rejected(c, good, size, DBL_AT(D_DENSE_H), 0, -0.1, "dense");
    expect_rejected(c, good, size, DBL_AT(D_DENSE_T0), 0, 1.6, "dense");    /* after time */
    expect_rejected(c, good, size, DBL_AT(D_DENSE + 3), 0, NAN, "dense");
    expect_rejected(c, good, size, DBL_AT(D_HNEXT), 0, -0.5, "h_next");
    expect_rejected(c, good, size, DBL_AT(D_HNEXT + 1), 0, INFINITY, "h_next");
    expect_rejected(c, good, size, DBL_AT(D_RKSPAN), 0, -1.0, "rk_");
    expect_rejected(c, good, size, DBL_AT(D_RKEVALS + 1), 0, NAN, "rk_evals");
    expect_rejected(c, good, size, DBL_AT(D_X), 0, NAN, "states");
    expect_rejected(c, good, size, DBL_AT(D_P + 1), 0, INFINITY, "parameters");
    expect_rejected(c, good, size, DBL_AT(D_IN), 0, -NAN, "inputs");
    expect_rejected(c, good, size, DBL_AT(D_FI), 0, NAN, "fi");             /* int_valid = 1 */
    expect_rejected(c, good, size, DBL_AT(D_XI), 0, INFINITY, "xi");
    expect_rejected(c, good, size, INT_AT(1), 1, 3.0, "mode");              /* two modes at once */
    expect_rejected(c, good, size, INT_AT(5), 1, 2.0, "int_valid");
    expect_rejected(c, good, size, INT_AT(7), 1, 7.0, "rk_last");
    expect_rejected(c, good, size, INT_AT(9), 1, -1.0, "rk_steps");
    expect_rejected(c, good, size, INT_AT(9), 1, 1e6, "rk_steps");
    expect_rejected(c, good, size, INT_AT(10), 1, -5.0, "rk_age");
    /* the instance is unchanged by the rejected calls */
    CHECK(get2(c, VR_X) == x_before);
    CHECK(fmi2GetFMUstate(c, &s2) == fmi2OK && fmi2SerializeFMUstate(c, s2, (fmi2Byte *)after, size) == fmi2OK);
    CHECK(memcmp(before, after, size) == 0);

    /* the good bytes restore the trajectory in a second instance */
    other = cs2(1e-6);
    if (other != NULL) {
        fmi2FMUstate s3 = NULL;
        CHECK(fmi2DeSerializeFMUstate(other, (const fmi2Byte *)good, size, &s3) == fmi2OK);
        CHECK(fmi2SetFMUstate(other, s3) == fmi2OK);
        CHECK(fmi2DoStep(other, 1.5, 0.5, fmi2True) == fmi2OK && fmi2DoStep(c, 1.5, 0.5, fmi2True) == fmi2OK);
        CHECK(get2(other, VR_X) == get2(c, VR_X) && fabs(get2(c, VR_X) - exp(-2.0)) < 1e-6);
        fmi2FreeInstance(other); /* frees s3 */
    }
    free(good);
    free(buf);
    free(before);
    free(after);
    fmi2FreeInstance(c); /* frees s and s2 */
}

/* ---------------------------------------------------------------------------------------------- */
/* States freed with their instance                                                               */
/* ---------------------------------------------------------------------------------------------- */

static void test_state_lifetime(void)
{
    const int cycles = 5000;
    fmi3Boolean ev, term, early;
    double last;
    int i;

    /* FMI 2: every allocation through the importer's callbacks comes back by FreeInstance */
    outstanding = 0;
    for (i = 0; i < cycles; i++) {
        fmi2Component c = cs2(1e-6);
        fmi2FMUstate s = NULL, s2 = NULL, s3 = NULL;
        unsigned char buf[1024];
        size_t size = 0;
        if (c == NULL)
            return;
        CHECK(fmi2GetFMUstate(c, &s) == fmi2OK);
        CHECK(fmi2GetFMUstate(c, &s2) == fmi2OK);
        if (i % 2 == 0)
            CHECK(fmi2FreeFMUstate(c, &s) == fmi2OK && s == NULL); /* freed by the importer: not twice */
        if (i % 100 == 0) {
            CHECK(fmi2SerializedFMUstateSize(c, s2, &size) == fmi2OK && size <= sizeof buf);
            CHECK(fmi2SerializeFMUstate(c, s2, (fmi2Byte *)buf, sizeof buf) == fmi2OK);
            CHECK(fmi2DeSerializeFMUstate(c, (const fmi2Byte *)buf, size, &s3) == fmi2OK);
        }
        fmi2FreeInstance(c);
        if (outstanding != 0) {
            CHECK(outstanding == 0);
            printf("    cycle %d: %ld allocations not freed by fmi2FreeInstance\n", i, outstanding);
            return;
        }
    }

    /* a state freed through another instance of the same FMU leaves the owner's list consistent */
    {
        fmi2Component a = cs2(1e-6), b = cs2(1e-6);
        fmi2FMUstate s = NULL, t = NULL;
        if (a != NULL && b != NULL) {
            CHECK(fmi2GetFMUstate(a, &s) == fmi2OK && fmi2GetFMUstate(a, &t) == fmi2OK);
            CHECK(fmi2FreeFMUstate(b, &s) == fmi2OK);
            CHECK(fmi2SetFMUstate(a, t) == fmi2OK);
        }
        fmi2FreeInstance(a);
        fmi2FreeInstance(b);
        CHECK(outstanding == 0);
    }

    /* FMI 3 (calloc/free inside the runtime): LeakSanitizer reports what FreeInstance leaves behind */
    for (i = 0; i < cycles; i++) {
        fmi3Instance c = fmi3InstantiateCoSimulation("cs", TOKEN, NULL, fmi3False, fmi3False, fmi3False, fmi3False,
                                                     NULL, 0, NULL, logger3, NULL);
        fmi3FMUState s = NULL;
        if (c == NULL)
            return;
        CHECK(fmi3EnterInitializationMode(c, fmi3True, 1e-6, 0.0, fmi3False, 0.0) == fmi3OK);
        CHECK(fmi3ExitInitializationMode(c) == fmi3OK);
        CHECK(fmi3DoStep(c, 0.0, 0.1, fmi3True, &ev, &term, &early, &last) == fmi3OK);
        CHECK(fmi3GetFMUState(c, &s) == fmi3OK);
        fmi3FreeInstance(c);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Huge communication steps                                                                       */
/* ---------------------------------------------------------------------------------------------- */

static void test_huge_step(void)
{
    fmi2Component c = cs2(1e-8);
    double last = 0.0;

    /* x' = u = 1 (b = 0): x = 1 + t, which the methods integrate exactly (error estimate 0), so the
     * step size grows by the controller's maximum factor per step: integrated to 1e308 */
    if (c == NULL)
        return;
    CHECK(set2(c, VR_B, 0.0) == fmi2OK && set2(c, VR_U, 1.0) == fmi2OK && set2(c, VR_XMAX, DBL_MAX) == fmi2OK);
    CHECK(fmi2ExitInitializationMode(c) == fmi2OK);
    CHECK(fmi2DoStep(c, 0.0, 1e308, fmi2True) == fmi2OK);
    CHECK(get2(c, VR_TIME) == 1e308 && fabs(get2(c, VR_X) / 1e308 - 1.0) < 1e-12);
    CHECK(fmi2DoStep(c, 1e308, 1.0, fmi2True) == fmi2OK);      /* lost in the round-off of t: nothing */
    CHECK(get2(c, VR_TIME) == 1e308);
    CHECK(fmi2DoStep(c, 1e308, 1e308, fmi2True) == fmi2Error); /* 2e308 overflows */
    CHECK(strstr(last_error, "sum finite") != NULL);
    fmi2FreeInstance(c);

    /* x' = 1e3 (1 - x) from x = 1.5: explicit stability limits the step to ~3e-3, so 1e308 needs
     * ~1e311 steps: the step limit, named as such */
    c = cs2(1e-8);
    if (c == NULL)
        return;
    CHECK(set2(c, VR_B, 1e3) == fmi2OK && set2(c, VR_C, 1.0) == fmi2OK && set2(c, VR_X, 1.5) == fmi2OK);
    CHECK(fmi2ExitInitializationMode(c) == fmi2OK);
    n_errors = 0;
    CHECK(fmi2DoStep(c, 0.0, 1e308, fmi2True) == fmi2Error);
    CHECK(n_errors == 1 && strstr(last_error, "maximum number of integration steps") != NULL &&
          strstr(last_error, "too small") == NULL && strstr(last_error, "shorter communication steps") != NULL);
    CHECK(fmi2GetRealStatus(c, fmi2LastSuccessfulTime, &last) == fmi2OK && last > 0.0 && last < 1e308);
    CHECK(fabs(get2(c, VR_X) - 1.0) < 1e-6); /* the last accepted step, on the equilibrium */
    if (verbose)
        printf("    1e308: %s\n", last_error);
    fmi2FreeInstance(c);
}

/* ---------------------------------------------------------------------------------------------- */
/* NaN and infinity at run time                                                                   */
/* ---------------------------------------------------------------------------------------------- */

static void test_non_finite(void)
{
    fmi2Component me = fmi2Instantiate("me", fmi2ModelExchange, TOKEN, "", &callbacks2, fmi2False, fmi2False);
    fmi2EventInfo info;
    double x, dx = 0.0;

    CHECK(me != NULL);
    if (me == NULL)
        return;
    CHECK(fmi2SetupExperiment(me, fmi2False, 0.0, 0.0, fmi2False, 0.0) == fmi2OK);
    CHECK(fmi2EnterInitializationMode(me) == fmi2OK && fmi2ExitInitializationMode(me) == fmi2OK);
    CHECK(fmi2NewDiscreteStates(me, &info) == fmi2OK && fmi2EnterContinuousTimeMode(me) == fmi2OK);
    CHECK(fmi2SetTime(me, 0.25) == fmi2OK);
    CHECK(fmi2SetTime(me, -1.0) == fmi2Error && strstr(last_error, "before startTime") != NULL);

    /* a NaN state: rejected, naming x by its value reference, and the time; the instance keeps x */
    x = NAN;
    CHECK(fmi2SetContinuousStates(me, &x, 1) == fmi2Error);
    CHECK(strstr(last_error, "value reference 1") != NULL && strstr(last_error, "t = 0.25") != NULL);
    CHECK(fmi2GetContinuousStates(me, &x, 1) == fmi2OK && x == 1.0);
    x = -INFINITY;
    CHECK(fmi2SetContinuousStates(me, &x, 1) == fmi2Error && strstr(last_error, "value reference 1") != NULL);

    /* an infinite derivative (a x^2 overflows): Error naming der(x) and the time */
    CHECK(fmi2EnterEventMode(me) == fmi2OK);
    CHECK(set2(me, VR_A, 1e300) == fmi2OK && set2(me, VR_XMAX, DBL_MAX) == fmi2OK);
    CHECK(fmi2EnterContinuousTimeMode(me) == fmi2OK);
    x = 1e10;
    CHECK(fmi2SetContinuousStates(me, &x, 1) == fmi2OK);
    CHECK(fmi2GetDerivatives(me, &dx, 1) == fmi2Error);
    CHECK(strstr(last_error, "fmi2GetDerivatives") != NULL && strstr(last_error, "value reference 2") != NULL &&
          strstr(last_error, "t = 0.25") != NULL && strstr(last_error, "inf") != NULL);
    fmi2FreeInstance(me);

    /* Co-Simulation: x' = u = 1e300 (b = 0): x = 1 + 1e300 t overflows at t = DBL_MAX / 1e300 = 1.797e8;
     * the model's own bound is off (xmax = DBL_MAX): the runtime's check names x or der(x), and the time */
    {
        fmi3Instance cs = fmi3InstantiateCoSimulation("cs", TOKEN, NULL, fmi3False, fmi3False, fmi3False,
                                                      fmi3False, NULL, 0, NULL, logger3, NULL);
        fmi3ValueReference vrs[3] = {VR_U, VR_B, VR_XMAX};
        double values[3] = {1e300, 0.0, INFINITY}, last = -1.0;
        fmi3Boolean ev, term, early;
        CHECK(cs != NULL);
        if (cs == NULL)
            return;
        CHECK(fmi3SetFloat64(cs, vrs, 3, values, 3) == fmi3Error); /* xmax = inf: not finite */
        values[2] = DBL_MAX; /* the model's own check never fires: the runtime's does */
        CHECK(fmi3SetFloat64(cs, vrs, 3, values, 3) == fmi3OK);
        CHECK(fmi3EnterInitializationMode(cs, fmi3True, 1e-6, 0.0, fmi3False, 0.0) == fmi3OK);
        CHECK(fmi3ExitInitializationMode(cs) == fmi3OK);
        n_errors = 0;
        CHECK(fmi3DoStep(cs, 0.0, 2e8, fmi3True, &ev, &term, &early, &last) == fmi3Error);
        CHECK(n_errors == 1 && strstr(last_error, "fmi3DoStep") != NULL && strstr(last_error, "t = ") != NULL &&
              (strstr(last_error, "value reference 2") != NULL || strstr(last_error, "value reference 1") != NULL));
        CHECK(last > 1.79e8 && last <= DBL_MAX / 1e300);
        if (verbose)
            printf("    CS overflow: %s\n", last_error);
        fmi3FreeInstance(cs);
    }
}

int main(int argc, char **argv)
{
    verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    test_tolerance();
    test_state_fields();
    test_state_lifetime();
    test_huge_step();
    test_non_finite();
    printf("test_edges: %d failure(s)\n", failures);
    return failures;
}
