/* nhbridge FMU runtime: instance logic shared by FMI 2.0 and FMI 3.0 (see nhb_core.h). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nhb_core.h"

/* ============================================================================================== */
/* Small helpers                                                                                  */
/* ============================================================================================== */

/* Number of elements to allocate for an array of n entries (never 0, so no pointer is NULL). */
static size_t alloc_count(int n)
{
    return n > 0 ? (size_t)n : 1u;
}

static double *alloc_doubles(const nhb_instance *inst, size_t n)
{
    return (double *)inst->alloc_mem(n, sizeof(double));
}

static void invalidate_caches(nhb_instance *inst)
{
    inst->rhs_valid = 0;
    inst->out_valid = 0;
}

static const char *kind_name(int kind)
{
    switch (kind) {
    case NHB_TIME: return "time";
    case NHB_STATE: return "state";
    case NHB_DERIVATIVE: return "state derivative";
    case NHB_PARAMETER: return "parameter";
    case NHB_INPUT: return "input";
    case NHB_VELOCITY: return "velocity";
    case NHB_OUTPUT: return "output";
    case NHB_MULTIPLIER: return "multiplier";
    case NHB_RESIDUAL: return "constraint residual";
    default: return "unknown kind";
    }
}

/* Number of entries of the array that variables of this kind index into (-1: invalid kind). */
static int kind_count(int kind)
{
    switch (kind) {
    case NHB_TIME: return 1;
    case NHB_STATE: return NHB_NX;
    case NHB_DERIVATIVE: return NHB_NX;
    case NHB_PARAMETER: return NHB_NP;
    case NHB_INPUT: return NHB_NIN;
    case NHB_VELOCITY: return NHB_NV;
    case NHB_OUTPUT: return NHB_NY;
    case NHB_MULTIPLIER: return NHB_NLAM;
    case NHB_RESIDUAL: return NHB_NRES;
    default: return -1;
    }
}

/* Binary search in NHB_VARIABLES (sorted by vr, checked in nhb_init). NULL if not found. */
static const nhb_variable *find_variable(unsigned int vr)
{
    int lo = 0, hi = NHB_NVARS - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (NHB_VARIABLES[mid].vr == vr)
            return &NHB_VARIABLES[mid];
        if (NHB_VARIABLES[mid].vr < vr)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* ============================================================================================== */
/* Logging                                                                                        */
/* ============================================================================================== */

const char *nhb_category_name(unsigned category)
{
    switch (category) {
    case NHB_LOG_ERROR: return "logStatusError";
    case NHB_LOG_WARNING: return "logStatusWarning";
    case NHB_LOG_DEBUG: return "logDebug";
    default: return "logUnknown";
    }
}

unsigned nhb_category_flag(const char *name)
{
    unsigned flag;
    if (name == NULL)
        return 0;
    for (flag = 1; flag & NHB_LOG_ALL; flag <<= 1)
        if (strcmp(name, nhb_category_name(flag)) == 0)
            return flag;
    return 0;
}

void nhb_log(const nhb_instance *inst, nhb_status status, const char *fmt, ...)
{
    char buf[2 * NHB_MSG_LEN];
    unsigned category;
    va_list ap;

    if (inst == NULL || inst->log_fn == NULL)
        return;
    if (status == NHB_ERROR || status == NHB_FATAL)
        category = NHB_LOG_ERROR; /* errors are always reported */
    else if (status == NHB_WARNING || status == NHB_DISCARD)
        category = NHB_LOG_WARNING;
    else
        category = NHB_LOG_DEBUG;
    if (category != NHB_LOG_ERROR && !(inst->log_categories & category))
        return;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    inst->log_fn(inst, status, nhb_category_name(category), buf);
}

nhb_status nhb_set_debug_logging(nhb_instance *inst, const char *func, int logging_on, size_t n,
                                 const char *const categories[])
{
    unsigned mask = 0;
    size_t i;

    if (n == 0) {
        inst->log_categories = logging_on ? NHB_LOG_ALL : 0u;
        return NHB_OK;
    }
    if (categories == NULL)
        return nhb_null_argument(inst, func, "categories");
    for (i = 0; i < n; i++) {
        unsigned flag = nhb_category_flag(categories[i]);
        if (flag == 0) {
            nhb_log(inst, NHB_ERROR, "%s: unknown log category \"%s\" (known: logStatusError, "
                    "logStatusWarning, logDebug)", func, categories[i] ? categories[i] : "(null)");
            return NHB_ERROR;
        }
        mask |= flag;
    }
    if (logging_on)
        inst->log_categories |= mask;
    else
        inst->log_categories &= ~mask;
    return NHB_OK;
}

/* ============================================================================================== */
/* State machine                                                                                  */
/* ============================================================================================== */

const char *nhb_mode_name(unsigned mode)
{
    switch (mode) {
    case NHB_MODE_INSTANTIATED: return "Instantiated";
    case NHB_MODE_INIT: return "Initialization Mode";
    case NHB_MODE_EVENT: return "Event Mode";
    case NHB_MODE_CONT: return "Continuous-Time Mode";
    case NHB_MODE_STEP: return "Step Mode";
    case NHB_MODE_TERMINATED: return "Terminated";
    case NHB_MODE_ERROR: return "Error (after a failed call; only getters, Reset and FreeInstance)";
    default: return "an unknown mode";
    }
}

int nhb_allowed(const nhb_instance *inst, const char *func, unsigned allowed)
{
    if (inst->mode & allowed)
        return 1;
    nhb_log(inst, NHB_ERROR, "%s: not allowed in %s", func, nhb_mode_name(inst->mode));
    return 0;
}

int nhb_interface_is(const nhb_instance *inst, const char *func, int interface)
{
    if (inst->interface == interface)
        return 1;
    nhb_log(inst, NHB_ERROR, "%s: only available for %s instances", func,
            interface == NHB_ME ? "Model Exchange" : "Co-Simulation");
    return 0;
}

nhb_status nhb_null_argument(const nhb_instance *inst, const char *func, const char *what)
{
    nhb_log(inst, NHB_ERROR, "%s: argument %s is NULL", func, what);
    return NHB_ERROR;
}

/* ============================================================================================== */
/* Life cycle                                                                                     */
/* ============================================================================================== */

/* Check the tables of the generated model.c; log the first inconsistency. Returns 1 if valid. */
static int check_model_tables(const nhb_instance *inst)
{
    int i;
    const int counts[] = {NHB_NX, NHB_NQ, NHB_NP, NHB_NIN, NHB_NV, NHB_NY, NHB_NLAM, NHB_NRES, NHB_NVARS};

    for (i = 0; i < (int)(sizeof counts / sizeof counts[0]); i++) {
        if (counts[i] < 0) {
            nhb_log(inst, NHB_ERROR, "model.c: negative array size (entry %d of NX, NQ, NP, NIN, NV, "
                    "NY, NLAM, NRES, NVARS)", i);
            return 0;
        }
    }
    for (i = 0; i < NHB_NVARS; i++) {
        const nhb_variable *var = &NHB_VARIABLES[i];
        int count = kind_count(var->kind);
        if (i > 0 && NHB_VARIABLES[i - 1].vr >= var->vr) {
            nhb_log(inst, NHB_ERROR, "model.c: NHB_VARIABLES is not sorted by strictly increasing value "
                    "reference (entry %d, vr %u)", i, var->vr);
            return 0;
        }
        if (count < 0) {
            nhb_log(inst, NHB_ERROR, "model.c: NHB_VARIABLES entry %d (vr %u) has invalid kind %d", i,
                    var->vr, var->kind);
            return 0;
        }
        if (var->index < 0 || var->index >= count) {
            nhb_log(inst, NHB_ERROR, "model.c: NHB_VARIABLES entry %d (vr %u, %s) has index %d outside "
                    "0..%d", i, var->vr, kind_name(var->kind), var->index, count - 1);
            return 0;
        }
    }
    return 1;
}

nhb_status nhb_init(nhb_instance *inst, const char *name, int interface, void *(*alloc_mem)(size_t, size_t),
                    void (*free_mem)(void *), nhb_log_fn log_fn, int logging_on)
{
    size_t len = strlen(name) + 1;

    inst->interface = interface;
    inst->mode = NHB_MODE_INSTANTIATED;
    inst->alloc_mem = alloc_mem;
    inst->free_mem = free_mem;
    inst->log_fn = log_fn;
    inst->log_categories = logging_on ? NHB_LOG_ALL : 0u;

    inst->name = (char *)alloc_mem(len, 1);
    if (inst->name == NULL)
        return NHB_ERROR; /* the FMI layer reports "out of memory" */
    memcpy(inst->name, name, len);

    if (!check_model_tables(inst))
        return NHB_ERROR;

    inst->x = alloc_doubles(inst, alloc_count(NHB_NX));
    inst->p = alloc_doubles(inst, alloc_count(NHB_NP));
    inst->in = alloc_doubles(inst, alloc_count(NHB_NIN));
    inst->dx = alloc_doubles(inst, alloc_count(NHB_NX));
    inst->lam = alloc_doubles(inst, alloc_count(NHB_NLAM));
    inst->v = alloc_doubles(inst, alloc_count(NHB_NV));
    inst->y = alloc_doubles(inst, alloc_count(NHB_NY));
    inst->r = alloc_doubles(inst, alloc_count(NHB_NRES));
    inst->work = alloc_doubles(inst, 9 * alloc_count(NHB_NX));
    inst->lam_work = alloc_doubles(inst, alloc_count(NHB_NLAM));
    if (!inst->x || !inst->p || !inst->in || !inst->dx || !inst->lam || !inst->v || !inst->y || !inst->r ||
        !inst->work || !inst->lam_work) {
        nhb_log(inst, NHB_ERROR, "out of memory");
        return NHB_ERROR;
    }
    nhb_reset(inst);
    return NHB_OK;
}

void nhb_release(nhb_instance *inst)
{
    double **arrays[] = {&inst->x, &inst->p, &inst->in, &inst->dx, &inst->lam, &inst->v, &inst->y,
                         &inst->r, &inst->work, &inst->lam_work};
    size_t i;

    if (inst->free_mem == NULL)
        return;
    for (i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        if (*arrays[i] != NULL)
            inst->free_mem(*arrays[i]);
        *arrays[i] = NULL;
    }
    if (inst->name != NULL)
        inst->free_mem(inst->name);
    inst->name = NULL;
}

void nhb_reset(nhb_instance *inst)
{
    if (NHB_NX > 0)
        memcpy(inst->x, NHB_X0, (size_t)NHB_NX * sizeof(double));
    if (NHB_NP > 0)
        memcpy(inst->p, NHB_P0, (size_t)NHB_NP * sizeof(double));
    if (NHB_NIN > 0)
        memcpy(inst->in, NHB_IN0, (size_t)NHB_NIN * sizeof(double));
    inst->time = 0.0;
    inst->start_time = 0.0;
    inst->stop_time = 0.0;
    inst->stop_time_defined = 0;
    inst->rtol = NHB_DEFAULT_RTOL;
    inst->atol = NHB_DEFAULT_RTOL * NHB_ATOL_FACTOR;
    inst->h_next = 0.0;
    inst->mode = NHB_MODE_INSTANTIATED;
    invalidate_caches(inst);
}

/* ============================================================================================== */
/* Model evaluation                                                                               */
/* ============================================================================================== */

/* Index of the first non-finite entry of a[0..n), or -1. */
static int first_non_finite(const double *a, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (!isfinite(a[i]))
            return i;
    return -1;
}

/* nhb_rhs() at (t, x) with the instance's parameters and inputs, plus a finiteness check of the
 * results. Returns 0, or 1 with the reason in inst->msg. */
static int eval_rhs(nhb_instance *inst, double t, const double *x, double *dx, double *lam)
{
    int rc, i;

    inst->msg[0] = '\0';
    rc = nhb_rhs(t, x, inst->p, inst->in, dx, lam, inst->msg, sizeof inst->msg);
    inst->msg[sizeof inst->msg - 1] = '\0';
    if (rc != 0) {
        if (inst->msg[0] == '\0')
            snprintf(inst->msg, sizeof inst->msg, "nhb_rhs failed (code %d) without a message", rc);
        return 1;
    }
    if ((i = first_non_finite(dx, NHB_NX)) >= 0) {
        snprintf(inst->msg, sizeof inst->msg, "non-finite state derivative dx[%d] = %g", i, dx[i]);
        return 1;
    }
    if ((i = first_non_finite(lam, NHB_NLAM)) >= 0) {
        snprintf(inst->msg, sizeof inst->msg, "non-finite multiplier lambda[%d] = %g", i, lam[i]);
        return 1;
    }
    return 0;
}

/* Make inst->dx and inst->lam valid at the current point; on failure log, enter Error mode. */
static nhb_status ensure_rhs(nhb_instance *inst, const char *func)
{
    if (inst->rhs_valid)
        return NHB_OK;
    if (eval_rhs(inst, inst->time, inst->x, inst->dx, inst->lam)) {
        nhb_log(inst, NHB_ERROR, "%s: model evaluation failed at t = %.17g: %s", func, inst->time, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        return NHB_ERROR;
    }
    inst->rhs_valid = 1;
    return NHB_OK;
}

/* Make inst->v, inst->y and inst->r valid at the current point; on failure log, enter Error mode. */
static nhb_status ensure_outputs(nhb_instance *inst, const char *func)
{
    int rc, i = -1;
    const char *what = "";

    if (inst->out_valid)
        return NHB_OK;
    inst->msg[0] = '\0';
    rc = nhb_outputs(inst->time, inst->x, inst->p, inst->in, inst->v, inst->y, inst->r, inst->msg,
                     sizeof inst->msg);
    inst->msg[sizeof inst->msg - 1] = '\0';
    if (rc != 0) {
        if (inst->msg[0] == '\0')
            snprintf(inst->msg, sizeof inst->msg, "nhb_outputs failed (code %d) without a message", rc);
    } else if ((i = first_non_finite(inst->v, NHB_NV)) >= 0) {
        what = "velocity v";
    } else if ((i = first_non_finite(inst->y, NHB_NY)) >= 0) {
        what = "output y";
    } else if ((i = first_non_finite(inst->r, NHB_NRES)) >= 0) {
        what = "constraint residual r";
    }
    if (rc != 0 || i >= 0) {
        if (rc == 0)
            snprintf(inst->msg, sizeof inst->msg, "non-finite %s[%d]", what, i);
        nhb_log(inst, NHB_ERROR, "%s: model evaluation failed at t = %.17g: %s", func, inst->time, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        return NHB_ERROR;
    }
    inst->out_valid = 1;
    return NHB_OK;
}

/* ============================================================================================== */
/* Experiment set-up and initialization                                                           */
/* ============================================================================================== */

nhb_status nhb_setup_experiment(nhb_instance *inst, const char *func, int tolerance_defined,
                                double tolerance, double start_time, int stop_time_defined,
                                double stop_time)
{
    /* below this the DOPRI5 error estimate drowns in round-off */
    const double min_rtol = 100.0 * DBL_EPSILON;

    if (!isfinite(start_time)) {
        nhb_log(inst, NHB_ERROR, "%s: startTime is not finite", func);
        return NHB_ERROR;
    }
    if (stop_time_defined && !(stop_time >= start_time)) {
        nhb_log(inst, NHB_ERROR, "%s: stopTime (%g) is before startTime (%g)", func, stop_time, start_time);
        return NHB_ERROR;
    }
    if (tolerance_defined && !(tolerance > 0.0 && isfinite(tolerance))) {
        nhb_log(inst, NHB_ERROR, "%s: tolerance must be positive and finite (got %g)", func, tolerance);
        return NHB_ERROR;
    }

    inst->rtol = tolerance_defined ? tolerance : NHB_DEFAULT_RTOL;
    if (inst->rtol < min_rtol) {
        nhb_log(inst, NHB_WARNING, "%s: tolerance %g is below %g; using %g", func, inst->rtol, min_rtol,
                min_rtol);
        inst->rtol = min_rtol;
    }
    inst->atol = inst->rtol * NHB_ATOL_FACTOR;
    inst->start_time = start_time;
    inst->stop_time_defined = stop_time_defined != 0;
    inst->stop_time = stop_time_defined ? stop_time : 0.0;
    inst->time = start_time;
    invalidate_caches(inst);
    return NHB_OK;
}

nhb_status nhb_check_initial_point(nhb_instance *inst, const char *func)
{
    invalidate_caches(inst);
    if (ensure_rhs(inst, func) != NHB_OK)
        return NHB_ERROR;
    return ensure_outputs(inst, func);
}

/* ============================================================================================== */
/* Variable access                                                                                */
/* ============================================================================================== */

nhb_status nhb_get_float64(nhb_instance *inst, const char *func, const unsigned int vr[], size_t n,
                           double values[])
{
    size_t i;

    if (n == 0)
        return NHB_OK;
    if (vr == NULL)
        return nhb_null_argument(inst, func, "valueReferences");
    if (values == NULL)
        return nhb_null_argument(inst, func, "values");

    for (i = 0; i < n; i++) {
        const nhb_variable *var = find_variable(vr[i]);
        if (var == NULL) {
            nhb_log(inst, NHB_ERROR, "%s: unknown value reference %u", func, vr[i]);
            return NHB_ERROR;
        }
        switch (var->kind) {
        case NHB_TIME:
            values[i] = inst->time;
            break;
        case NHB_STATE:
            values[i] = inst->x[var->index];
            break;
        case NHB_PARAMETER:
            values[i] = inst->p[var->index];
            break;
        case NHB_INPUT:
            values[i] = inst->in[var->index];
            break;
        case NHB_DERIVATIVE:
        case NHB_MULTIPLIER:
            if (ensure_rhs(inst, func) != NHB_OK)
                return NHB_ERROR;
            values[i] = var->kind == NHB_DERIVATIVE ? inst->dx[var->index] : inst->lam[var->index];
            break;
        default: /* NHB_VELOCITY, NHB_OUTPUT, NHB_RESIDUAL (kinds are checked in nhb_init) */
            if (ensure_outputs(inst, func) != NHB_OK)
                return NHB_ERROR;
            values[i] = var->kind == NHB_VELOCITY ? inst->v[var->index]
                      : var->kind == NHB_OUTPUT   ? inst->y[var->index]
                                                  : inst->r[var->index];
            break;
        }
    }
    return NHB_OK;
}

/* Modes in which a variable of the given kind may be set (0: never). */
static unsigned settable_modes(int kind)
{
    switch (kind) {
    case NHB_STATE: /* start values; afterwards only through SetContinuousStates (ME) */
        return NHB_MODE_INSTANTIATED | NHB_MODE_INIT;
    case NHB_PARAMETER: /* tunable: also at events (ME) and between communication steps (CS) */
        return NHB_MODE_INSTANTIATED | NHB_MODE_INIT | NHB_MODE_EVENT | NHB_MODE_STEP;
    case NHB_INPUT:
        return NHB_MODE_INSTANTIATED | NHB_MODE_INIT | NHB_MODE_EVENT | NHB_MODE_CONT | NHB_MODE_STEP;
    default: /* time and computed quantities */
        return 0;
    }
}

nhb_status nhb_set_float64(nhb_instance *inst, const char *func, const unsigned int vr[], size_t n,
                           const double values[])
{
    size_t i;

    if (n == 0)
        return NHB_OK;
    if (vr == NULL)
        return nhb_null_argument(inst, func, "valueReferences");
    if (values == NULL)
        return nhb_null_argument(inst, func, "values");

    /* first check everything, so that a failing call changes nothing */
    for (i = 0; i < n; i++) {
        const nhb_variable *var = find_variable(vr[i]);
        unsigned modes;
        if (var == NULL) {
            nhb_log(inst, NHB_ERROR, "%s: unknown value reference %u", func, vr[i]);
            return NHB_ERROR;
        }
        modes = settable_modes(var->kind);
        if (modes == 0) {
            nhb_log(inst, NHB_ERROR, "%s: value reference %u (%s) cannot be set", func, vr[i],
                    kind_name(var->kind));
            return NHB_ERROR;
        }
        if (!(inst->mode & modes)) {
            nhb_log(inst, NHB_ERROR, "%s: the %s with value reference %u cannot be set in %s%s", func,
                    kind_name(var->kind), vr[i], nhb_mode_name(inst->mode),
                    var->kind == NHB_STATE ? " (after initialization states are set only through "
                                             "SetContinuousStates, Model Exchange)" : "");
            return NHB_ERROR;
        }
        if (!isfinite(values[i])) {
            nhb_log(inst, NHB_ERROR, "%s: value %g for value reference %u is not finite", func, values[i],
                    vr[i]);
            return NHB_ERROR;
        }
    }
    for (i = 0; i < n; i++) {
        const nhb_variable *var = find_variable(vr[i]);
        double *target = var->kind == NHB_STATE ? inst->x : var->kind == NHB_PARAMETER ? inst->p : inst->in;
        target[var->index] = values[i];
    }
    invalidate_caches(inst);
    return NHB_OK;
}

nhb_status nhb_no_variables_of_type(const nhb_instance *inst, const char *func, const unsigned int vr[],
                                    size_t n, const char *type_name)
{
    if (n == 0)
        return NHB_OK;
    if (vr == NULL)
        return nhb_null_argument(inst, func, "valueReferences");
    nhb_log(inst, NHB_ERROR, "%s: value reference %u is not a variable of type %s (this FMU has only "
            "Float64/Real variables)", func, vr[0], type_name);
    return NHB_ERROR;
}

/* ============================================================================================== */
/* Model Exchange                                                                                 */
/* ============================================================================================== */

/* Check an array argument of the continuous-state functions: the count and the pointer. */
static nhb_status check_state_array(const nhb_instance *inst, const char *func, const void *a, size_t n,
                                    int expected, const char *what)
{
    if (n != (size_t)expected) {
        nhb_log(inst, NHB_ERROR, "%s: expected %d %s, got %lu", func, expected, what, (unsigned long)n);
        return NHB_ERROR;
    }
    if (n > 0 && a == NULL)
        return nhb_null_argument(inst, func, what);
    return NHB_OK;
}

nhb_status nhb_set_time(nhb_instance *inst, const char *func, double t)
{
    if (!isfinite(t)) {
        nhb_log(inst, NHB_ERROR, "%s: time %g is not finite", func, t);
        return NHB_ERROR;
    }
    inst->time = t;
    invalidate_caches(inst);
    return NHB_OK;
}

nhb_status nhb_set_states(nhb_instance *inst, const char *func, const double x[], size_t nx)
{
    int i;

    if (check_state_array(inst, func, x, nx, NHB_NX, "continuous states") != NHB_OK)
        return NHB_ERROR;
    if ((i = first_non_finite(x, NHB_NX)) >= 0) {
        nhb_log(inst, NHB_ERROR, "%s: state x[%d] = %g is not finite", func, i, x[i]);
        return NHB_ERROR;
    }
    if (NHB_NX > 0)
        memcpy(inst->x, x, (size_t)NHB_NX * sizeof(double));
    invalidate_caches(inst);
    return NHB_OK;
}

nhb_status nhb_get_states(nhb_instance *inst, const char *func, double x[], size_t nx)
{
    if (check_state_array(inst, func, x, nx, NHB_NX, "continuous states") != NHB_OK)
        return NHB_ERROR;
    if (NHB_NX > 0)
        memcpy(x, inst->x, (size_t)NHB_NX * sizeof(double));
    return NHB_OK;
}

nhb_status nhb_get_derivatives(nhb_instance *inst, const char *func, double dx[], size_t nx)
{
    if (check_state_array(inst, func, dx, nx, NHB_NX, "state derivatives") != NHB_OK)
        return NHB_ERROR;
    if (NHB_NX == 0)
        return NHB_OK;
    if (ensure_rhs(inst, func) != NHB_OK)
        return NHB_ERROR;
    memcpy(dx, inst->dx, (size_t)NHB_NX * sizeof(double));
    return NHB_OK;
}

nhb_status nhb_get_nominals(nhb_instance *inst, const char *func, double nominals[], size_t nx)
{
    size_t i;

    if (check_state_array(inst, func, nominals, nx, NHB_NX, "nominals") != NHB_OK)
        return NHB_ERROR;
    for (i = 0; i < nx; i++)
        nominals[i] = NHB_NOMINALS[i];
    return NHB_OK;
}

nhb_status nhb_get_event_indicators(nhb_instance *inst, const char *func, double z[], size_t nz)
{
    /* the models have no event indicators */
    return check_state_array(inst, func, z, nz, 0, "event indicators");
}

/* ============================================================================================== */
/* Co-Simulation: adaptive Dormand-Prince 5(4)                                                    */
/* ============================================================================================== */

/* Butcher tableau of Dormand & Prince (1980): nodes C, coefficients A, 5th-order weights in the
 * last row of A (FSAL: the 7th stage is f at the new point), error weights E = b5 - b4, as in
 * DOPRI5 of Hairer, Norsett & Wanner, Solving Ordinary Differential Equations I. */
#define C2 (1.0 / 5.0)
#define C3 (3.0 / 10.0)
#define C4 (4.0 / 5.0)
#define C5 (8.0 / 9.0)
#define A21 (1.0 / 5.0)
#define A31 (3.0 / 40.0)
#define A32 (9.0 / 40.0)
#define A41 (44.0 / 45.0)
#define A42 (-56.0 / 15.0)
#define A43 (32.0 / 9.0)
#define A51 (19372.0 / 6561.0)
#define A52 (-25360.0 / 2187.0)
#define A53 (64448.0 / 6561.0)
#define A54 (-212.0 / 729.0)
#define A61 (9017.0 / 3168.0)
#define A62 (-355.0 / 33.0)
#define A63 (46732.0 / 5247.0)
#define A64 (49.0 / 176.0)
#define A65 (-5103.0 / 18656.0)
#define A71 (35.0 / 384.0)
#define A73 (500.0 / 1113.0)
#define A74 (125.0 / 192.0)
#define A75 (-2187.0 / 6784.0)
#define A76 (11.0 / 84.0)
#define E1 (71.0 / 57600.0)
#define E3 (-71.0 / 16695.0)
#define E4 (71.0 / 1920.0)
#define E5 (-17253.0 / 339200.0)
#define E6 (22.0 / 525.0)
#define E7 (-1.0 / 40.0)

/* Step-size controller: h_new = h * clamp(SAFETY * err^(-1/5), FAC_MIN, FAC_MAX). */
#define SAFETY 0.9
#define FAC_MIN 0.2
#define FAC_MAX 5.0

/* Weighted RMS norm of e with the scale atol + rtol * max(|a_i|, |b_i|). NaN propagates. */
static double wrms_norm(const nhb_instance *inst, const double *e, const double *a, const double *b)
{
    double sum = 0.0;
    int i;
    for (i = 0; i < NHB_NX; i++) {
        double sk = inst->atol * NHB_NOMINALS[i] + inst->rtol * fmax(fabs(a[i]), fabs(b[i]));
        double q = e[i] / sk;
        sum += q * q;
    }
    return sqrt(sum / NHB_NX);
}

/* Initial step size (Hairer, Norsett & Wanner, Solving ODEs I, II.4): from the size of x0, f0
 * and an estimate of the second derivative by one explicit Euler step. x1 and f1 are scratch. */
static double initial_step(nhb_instance *inst, double t, const double *x0, const double *f0,
                           double span, double *x1, double *f1)
{
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, h0, h1, dmax;
    int i, n = NHB_NX;

    for (i = 0; i < n; i++) {
        double sk = inst->atol * NHB_NOMINALS[i] + inst->rtol * fabs(x0[i]);
        d0 += (x0[i] / sk) * (x0[i] / sk);
        d1 += (f0[i] / sk) * (f0[i] / sk);
    }
    d0 = sqrt(d0 / n);
    d1 = sqrt(d1 / n);
    h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h0 = fmin(h0, span);

    for (i = 0; i < n; i++)
        x1[i] = x0[i] + h0 * f0[i];
    if (eval_rhs(inst, t + h0, x1, f1, inst->lam_work))
        return h0; /* the step loop reduces h further if needed */
    for (i = 0; i < n; i++) {
        double sk = inst->atol * NHB_NOMINALS[i] + inst->rtol * fabs(x0[i]);
        d2 += ((f1[i] - f0[i]) / sk) * ((f1[i] - f0[i]) / sk);
    }
    d2 = sqrt(d2 / n) / h0;

    dmax = fmax(d1, d2);
    h1 = dmax <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dmax, 1.0 / 5.0);
    return fmin(fmin(100.0 * h0, h1), span);
}

/* Integrate inst->x from inst->time to t_end (> inst->time). */
static nhb_status integrate(nhb_instance *inst, const char *func, double t_end)
{
    const int n = NHB_NX;
    double *k1 = inst->work, *k2 = k1 + n, *k3 = k2 + n, *k4 = k3 + n, *k5 = k4 + n, *k6 = k5 + n;
    double *k7 = k6 + n, *xs = k7 + n, *xn = xs + n; /* stage state, new state */
    double *x = inst->x, *lam = inst->lam_work;
    const double t_start = inst->time;
    double t = t_start, h;
    long n_accepted = 0, n_rejected = 0;
    int rejected_last = 0, i;
    char model_msg[NHB_MSG_LEN] = ""; /* last failure of the model at a trial point */

    if (n == 0) {
        inst->time = t_end;
        return NHB_OK;
    }

    /* k1 = f(t, x): also re-evaluated at the start of every doStep because parameters and inputs
     * may have changed since the previous one */
    if (eval_rhs(inst, t, x, k1, lam)) {
        nhb_log(inst, NHB_ERROR, "%s: model evaluation failed at t = %.17g: %s", func, t, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        return NHB_ERROR;
    }
    h = inst->h_next > 0.0 ? inst->h_next : initial_step(inst, t, x, k1, t_end - t, xs, k2);

    for (;;) {
        double h_try, err = 0.0, fac;
        int last = 0, failed;

        if (n_accepted + n_rejected >= NHB_MAX_STEPS) {
            nhb_log(inst, NHB_ERROR, "%s: maximum number of integration steps (%ld) reached at t = %.17g "
                    "(h = %g) before the communication point %.17g", func, NHB_MAX_STEPS, t, h, t_end);
            inst->mode = NHB_MODE_ERROR;
            return NHB_ERROR;
        }

        /* land exactly on t_end; stretch by up to 1 % rather than leave a sliver */
        if (t + 1.01 * h >= t_end) {
            h_try = t_end - t;
            last = 1;
        } else {
            h_try = h;
        }

        /* stages 2..7; a failing model evaluation rejects the step like a too-large error */
        for (i = 0; i < n; i++)
            xs[i] = x[i] + h_try * A21 * k1[i];
        failed = eval_rhs(inst, t + C2 * h_try, xs, k2, lam);
        if (!failed) {
            for (i = 0; i < n; i++)
                xs[i] = x[i] + h_try * (A31 * k1[i] + A32 * k2[i]);
            failed = eval_rhs(inst, t + C3 * h_try, xs, k3, lam);
        }
        if (!failed) {
            for (i = 0; i < n; i++)
                xs[i] = x[i] + h_try * (A41 * k1[i] + A42 * k2[i] + A43 * k3[i]);
            failed = eval_rhs(inst, t + C4 * h_try, xs, k4, lam);
        }
        if (!failed) {
            for (i = 0; i < n; i++)
                xs[i] = x[i] + h_try * (A51 * k1[i] + A52 * k2[i] + A53 * k3[i] + A54 * k4[i]);
            failed = eval_rhs(inst, t + C5 * h_try, xs, k5, lam);
        }
        if (!failed) {
            for (i = 0; i < n; i++)
                xs[i] = x[i] + h_try * (A61 * k1[i] + A62 * k2[i] + A63 * k3[i] + A64 * k4[i] + A65 * k5[i]);
            failed = eval_rhs(inst, t + h_try, xs, k6, lam);
        }
        if (!failed) {
            for (i = 0; i < n; i++)
                xn[i] = x[i] + h_try * (A71 * k1[i] + A73 * k3[i] + A74 * k4[i] + A75 * k5[i] + A76 * k6[i]);
            failed = eval_rhs(inst, t + h_try, xn, k7, lam);
        }
        if (!failed) {
            /* local error estimate (into xs) and its weighted norm */
            for (i = 0; i < n; i++)
                xs[i] = h_try * (E1 * k1[i] + E3 * k3[i] + E4 * k4[i] + E5 * k5[i] + E6 * k6[i] + E7 * k7[i]);
            err = wrms_norm(inst, xs, x, xn);
        } else {
            memcpy(model_msg, inst->msg, sizeof model_msg);
        }

        if (failed || !(err <= 1.0)) { /* also catches err = NaN */
            fac = (failed || !isfinite(err)) ? FAC_MIN : fmax(FAC_MIN, SAFETY * pow(err, -0.2));
            h = h_try * fac;
            n_rejected++;
            rejected_last = 1;
            if (h < 16.0 * DBL_EPSILON * fmax(fabs(t), fabs(t_end - t_start))) {
                nhb_log(inst, NHB_ERROR, "%s: step size too small (h = %g) at t = %.17g%s%s", func, h, t,
                        model_msg[0] ? "; the model fails near this point: " : "", model_msg);
                inst->mode = NHB_MODE_ERROR;
                return NHB_ERROR;
            }
            continue;
        }

        /* accepted */
        n_accepted++;
        fac = err > 0.0 ? SAFETY * pow(err, -0.2) : FAC_MAX;
        fac = fmin(FAC_MAX, fmax(FAC_MIN, fac));
        if (rejected_last)
            fac = fmin(fac, 1.0); /* no growth right after a rejection */
        rejected_last = 0;
        memcpy(x, xn, (size_t)n * sizeof(double));
        memcpy(k1, k7, (size_t)n * sizeof(double)); /* FSAL */
        t = last ? t_end : t + h_try;
        inst->time = t;

        if (last) {
            double h_new = h_try * fac;
            if (h_try < h) {
                /* the last step was shortened to hit t_end: its capped growth factor understates
                 * the step size the controller wanted; keep the earlier proposal unless the error
                 * estimate of the short step says it is too large */
                double h_opt = err > 0.0 ? SAFETY * h_try * pow(err, -0.2) : HUGE_VAL;
                h_new = fmax(h_new, fmin(h, h_opt));
            }
            inst->h_next = h_new;
            break;
        }
        h = h_try * fac;
    }

    nhb_log(inst, NHB_OK, "%s: t = %.17g -> %.17g: %ld accepted and %ld rejected steps, next h = %g", func,
            t_start, t_end, n_accepted, n_rejected, inst->h_next);
    return NHB_OK;
}

nhb_status nhb_do_step(nhb_instance *inst, const char *func, double current_time, double step)
{
    nhb_status status;

    if (!isfinite(current_time) || !isfinite(step) || step < 0.0) {
        nhb_log(inst, NHB_ERROR, "%s: invalid communication point %g or step size %g", func, current_time, step);
        return NHB_ERROR;
    }
    /* the importer's time and ours differ at most by accumulated round-off */
    if (fabs(current_time - inst->time) > 1e-10 * fmax(1.0, fabs(inst->time))) {
        nhb_log(inst, NHB_ERROR, "%s: currentCommunicationPoint %.17g does not match the time of the FMU "
                "%.17g", func, current_time, inst->time);
        return NHB_ERROR;
    }
    inst->time = current_time;
    if (step == 0.0)
        return NHB_OK;

    status = integrate(inst, func, current_time + step);
    invalidate_caches(inst);
    return status;
}
