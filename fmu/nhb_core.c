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
    inst->work = alloc_doubles(inst, NHB_WORK_VECTORS * alloc_count(NHB_NX));
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
    inst->h_next[0] = inst->h_next[1] = 0.0;
    inst->rk_cost[0] = inst->rk_cost[1] = 0.0;
    inst->rk_age[0] = inst->rk_age[1] = 0;
    inst->rk_warm[0] = inst->rk_warm[1] = 0;
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
    /* below this the error estimates drown in round-off */
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
/* Co-Simulation: adaptive explicit Runge-Kutta, Dormand-Prince 5(4) and DOP853                   */
/* ============================================================================================== */

/* An embedded explicit Runge-Kutta pair, as in the codes DOPRI5 and DOP853 of Hairer, Norsett &
 * Wanner, Solving Ordinary Differential Equations I (2nd ed., II.4-II.5, II.10). A step of size h
 * from (t, x) evaluates the stages k[0..s) (k[0] = f(t, x)), forms the new state
 * x_new = x + h sum_j b_j k_j and evaluates k[s] = f(t + h, x_new), which is k[0] of the next
 * step (FSAL: "first same as last"). */
typedef struct {
    const char *name;
    int stages;          /* s */
    int error_order;     /* q: the error estimate is O(h^(q+1)); the controller uses err^(-1/(q+1)) */
    int fsal_in_error;   /* 1: the error estimate needs k[s] (DOPRI5), 0: k[s] only after acceptance */
    const double *c;     /* nodes c[0..s) */
    const double *a;     /* a[i][j], j < i, packed by rows: a[i * (i - 1) / 2 + j] */
    const double *b;     /* weights of x_new, b[0..s) */
    const double *e;     /* error weights e[0..s] (the last one multiplies k[s]) */
    const double *e3;    /* DOP853: weights of the 3rd-order error estimate, else NULL */
    double fac_min, fac_max; /* limits of the step-size change factor */
} rk_method;

/* Dormand & Prince (1980): 5th-order solution, error b5 - b4 (which needs k[6] = f(t + h, x_new)). */
static const double DP5_C[6] = {0.0, 1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0};
static const double DP5_A[15] = {
    1.0 / 5.0,
    3.0 / 40.0, 9.0 / 40.0,
    44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0,
    19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0,
    9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0,
};
static const double DP5_B[6] = {35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0};
static const double DP5_E[7] = {71.0 / 57600.0, 0.0, -71.0 / 16695.0, 71.0 / 1920.0, -17253.0 / 339200.0,
                                22.0 / 525.0, -1.0 / 40.0};

/* DOP853 (Dormand & Prince 1980; Hairer, Norsett & Wanner): 12 stages, 8th-order solution, error
 * estimate from an embedded 5th-order (E5) and 3rd-order (E3) pair, combined as
 * err = h |E5|^2 / sqrt(|E5|^2 + 0.01 |E3|^2). Coefficients as in Hairer's dop853.f (the same
 * values are in scipy/integrate/_ivp/dop853_coefficients.py). */
static const double DOP853_C[12] = {
    0.0, 0.526001519587677318785587544488e-01, 0.789002279381515978178381316732e-01,
    0.118350341907227396726757197510, 0.281649658092772603273242802490, 0.333333333333333333333333333333,
    0.25, 0.307692307692307692307692307692, 0.651282051282051282051282051282,
    0.6, 0.857142857142857142857142857142, 1.0
};
static const double DOP853_A[66] = {
    /* row 1 */
    5.26001519587677318785587544488e-2,
    /* row 2 */
    1.97250569845378994544595329183e-2, 5.91751709536136983633785987549e-2,
    /* row 3 */
    2.95875854768068491816892993775e-2, 0.0, 8.87627564304205475450678981324e-2,
    /* row 4 */
    2.41365134159266685502369798665e-1, 0.0, -8.84549479328286085344864962717e-1,
    9.24834003261792003115737966543e-1,
    /* row 5 */
    3.7037037037037037037037037037e-2, 0.0, 0.0,
    1.70828608729473871279604482173e-1, 1.25467687566822425016691814123e-1,
    /* row 6 */
    3.7109375e-2, 0.0, 0.0,
    1.70252211019544039314978060272e-1, 6.02165389804559606850219397283e-2, -1.7578125e-2,
    /* row 7 */
    3.70920001185047927108779319836e-2, 0.0, 0.0,
    1.70383925712239993810214054705e-1, 1.07262030446373284651809199168e-1, -1.53194377486244017527936158236e-2,
    8.27378916381402288758473766002e-3,
    /* row 8 */
    6.24110958716075717114429577812e-1, 0.0, 0.0,
    -3.36089262944694129406857109825, -8.68219346841726006818189891453e-1, 2.75920996994467083049415600797e1,
    2.01540675504778934086186788979e1, -4.34898841810699588477366255144e1,
    /* row 9 */
    4.77662536438264365890433908527e-1, 0.0, 0.0,
    -2.48811461997166764192642586468, -5.90290826836842996371446475743e-1, 2.12300514481811942347288949897e1,
    1.52792336328824235832596922938e1, -3.32882109689848629194453265587e1, -2.03312017085086261358222928593e-2,
    /* row 10 */
    -9.3714243008598732571704021658e-1, 0.0, 0.0,
    5.18637242884406370830023853209, 1.09143734899672957818500254654, -8.14978701074692612513997267357,
    -1.85200656599969598641566180701e1, 2.27394870993505042818970056734e1, 2.49360555267965238987089396762,
    -3.0467644718982195003823669022,
    /* row 11 */
    2.27331014751653820792359768449, 0.0, 0.0,
    -1.05344954667372501984066689879e1, -2.00087205822486249909675718444, -1.79589318631187989172765950534e1,
    2.79488845294199600508499808837e1, -2.85899827713502369474065508674, -8.87285693353062954433549289258,
    1.23605671757943030647266201528e1, 6.43392746015763530355970484046e-1,
};
static const double DOP853_B[12] = {
    5.42937341165687622380535766363e-2, 0.0, 0.0,
    0.0, 0.0, 4.45031289275240888144113950566,
    1.89151789931450038304281599044, -5.8012039600105847814672114227, 3.1116436695781989440891606237e-1,
    -1.52160949662516078556178806805e-1, 2.01365400804030348374776537501e-1, 4.47106157277725905176885569043e-2,
};
static const double DOP853_E5[13] = {
    0.1312004499419488073250102996e-1, 0.0, 0.0,
    0.0, 0.0, -0.1225156446376204440720569753e+1,
    -0.4957589496572501915214079952, 0.1664377182454986536961530415e+1, -0.3503288487499736816886487290,
    0.3341791187130174790297318841, 0.8192320648511571246570742613e-1, -0.2235530786388629525884427845e-1,
    0.0,
};
static const double DOP853_E3[13] = {
    5.42937341165687622380535766363e-2 - 0.244094488188976377952755905512, 0.0,
    0.0, 0.0,
    0.0, 4.45031289275240888144113950566,
    1.89151789931450038304281599044, -5.8012039600105847814672114227,
    3.1116436695781989440891606237e-1 - 0.733846688281611857341361741547, -1.52160949662516078556178806805e-1,
    2.01365400804030348374776537501e-1, 4.47106157277725905176885569043e-2 - 0.220588235294117647058823529412e-1,
    0.0,
};

static const rk_method RK_METHODS[2] = {
    {"Dormand-Prince 5(4)", 6, 4, 1, DP5_C, DP5_A, DP5_B, DP5_E, NULL, 0.2, 5.0},
    {"DOP853", 12, 7, 0, DOP853_C, DOP853_A, DOP853_B, DOP853_E5, DOP853_E3, 1.0 / 3.0, 6.0},
};

enum { RK_DOPRI5 = 0, RK_DOP853 = 1 };

/* Step-size controller: h_new = h * clamp(SAFETY * err^(-1/(q+1)), fac_min, fac_max). */
#define SAFETY 0.9

/* Error scale of component i: atol * nominal + rtol * max(|a|, |b|). */
static double error_scale(const nhb_instance *inst, int i, double a, double b)
{
    return inst->atol * NHB_NOMINALS[i] + inst->rtol * fmax(fabs(a), fabs(b));
}

/* out = sum_{j < count} w[j] k[j], skipping zero weights (w[0] is never zero here). */
static void combine(int n, int count, const double *w, double *const *k, double *out)
{
    int i, j;
    for (i = 0; i < n; i++)
        out[i] = w[0] * k[0][i];
    for (j = 1; j < count; j++) {
        const double wj = w[j], *kj = k[j];
        if (wj == 0.0)
            continue;
        for (i = 0; i < n; i++)
            out[i] += wj * kj[i];
    }
}

/* Norm of the local error estimate of a step of size h from x to xn (accept if <= 1): the
 * weighted RMS norm for DOPRI5, Hairer's combination of the 5th- and 3rd-order estimates for DOP853.
 * e5 and e3 are scratch vectors. NaN propagates. */
static double error_norm(const nhb_instance *inst, const rk_method *m, double h, double *const *k,
                         const double *x, const double *xn, double *e5, double *e3)
{
    const int n = NHB_NX;
    double sum5 = 0.0, sum3 = 0.0, deno;
    int i;

    combine(n, m->stages + 1, m->e, k, e5);
    if (m->e3 != NULL)
        combine(n, m->stages + 1, m->e3, k, e3);
    for (i = 0; i < n; i++) {
        double sk = error_scale(inst, i, x[i], xn[i]);
        sum5 += (e5[i] / sk) * (e5[i] / sk);
        if (m->e3 != NULL)
            sum3 += (e3[i] / sk) * (e3[i] / sk);
    }
    if (m->e3 == NULL)
        return fabs(h) * sqrt(sum5 / n);
    deno = sum5 + 0.01 * sum3;
    if (deno <= 0.0) /* both estimates are exactly zero */
        deno = 1.0;
    return fabs(h) * sum5 / sqrt(n * deno);
}

/* Initial step size (Hairer, Norsett & Wanner, Solving ODEs I, II.4): from the size of x0, f0
 * and an estimate of the second derivative by one explicit Euler step. x1 and f1 are scratch.
 * Counts its model evaluation in *n_evals. */
static double initial_step(nhb_instance *inst, const rk_method *m, double t, const double *x0,
                           const double *f0, double span, double *x1, double *f1, long *n_evals)
{
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, h0, h1, dmax;
    int i, n = NHB_NX;

    for (i = 0; i < n; i++) {
        double sk = error_scale(inst, i, x0[i], x0[i]);
        d0 += (x0[i] / sk) * (x0[i] / sk);
        d1 += (f0[i] / sk) * (f0[i] / sk);
    }
    d0 = sqrt(d0 / n);
    d1 = sqrt(d1 / n);
    h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h0 = fmin(h0, span);

    for (i = 0; i < n; i++)
        x1[i] = x0[i] + h0 * f0[i];
    ++*n_evals;
    if (eval_rhs(inst, t + h0, x1, f1, inst->lam_work))
        return h0; /* the step loop reduces h further if needed */
    for (i = 0; i < n; i++) {
        double sk = error_scale(inst, i, x0[i], x0[i]);
        d2 += ((f1[i] - f0[i]) / sk) * ((f1[i] - f0[i]) / sk);
    }
    d2 = sqrt(d2 / n) / h0;

    dmax = fmax(d1, d2);
    h1 = dmax <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dmax, 1.0 / (m->error_order + 1));
    return fmin(fmin(100.0 * h0, h1), span);
}

/* Integrate inst->x from inst->time to t_end (> inst->time) with method RK_METHODS[mi]. On entry
 * inst->dx holds f(time, x) if inst->rhs_valid; on success inst->work[0..NX) holds f(t_end, x),
 * inst->lam_work the multipliers of that evaluation, and *evals the number of model evaluations. */
static nhb_status integrate(nhb_instance *inst, const char *func, int mi, double t_end, long *evals)
{
    const rk_method *m = &RK_METHODS[mi];
    const int n = NHB_NX, s = m->stages;
    const double expo = -1.0 / (m->error_order + 1);
    double *k[NHB_RK_MAX_STAGES + 1];
    double *xs = inst->work + (NHB_RK_MAX_STAGES + 1) * (size_t)n; /* stage state */
    double *xn = xs + n, *e3 = xn + n;                               /* new state, error scratch */
    double *x = inst->x, *lam = inst->lam_work;
    const double t_start = inst->time;
    double t = t_start, h;
    long n_accepted = 0, n_rejected = 0, n_evals = 0;
    int rejected_last = 0, i;
    char model_msg[NHB_MSG_LEN] = ""; /* last failure of the model at a trial point */

    if (n == 0) {
        inst->time = t_end;
        return NHB_OK;
    }
    for (i = 0; i <= s; i++)
        k[i] = inst->work + (size_t)i * n;

    /* k[0] = f(t, x): from the cache (the last stage of the previous doStep, or an evaluation by a
     * getter) unless states, parameters, inputs or time were set since */
    if (inst->rhs_valid) {
        memcpy(k[0], inst->dx, (size_t)n * sizeof(double));
    } else {
        n_evals++;
        if (eval_rhs(inst, t, x, k[0], lam)) {
            nhb_log(inst, NHB_ERROR, "%s: model evaluation failed at t = %.17g: %s", func, t, inst->msg);
            inst->mode = NHB_MODE_ERROR;
            return NHB_ERROR;
        }
    }
    h = inst->h_next[mi] > 0.0 ? inst->h_next[mi]
                               : initial_step(inst, m, t, x, k[0], t_end - t, xs, k[1], &n_evals);

    for (;;) {
        double h_try, t_new, err = 0.0, fac;
        int last = 0, failed = 0;

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
        t_new = last ? t_end : t + h_try;

        /* stages 1..s-1; a failing model evaluation rejects the step like a too-large error */
        for (i = 1; i < s && !failed; i++) {
            int r;
            combine(n, i, m->a + i * (i - 1) / 2, k, xs);
            for (r = 0; r < n; r++)
                xs[r] = x[r] + h_try * xs[r];
            n_evals++;
            failed = eval_rhs(inst, t + m->c[i] * h_try, xs, k[i], lam);
        }
        if (!failed) {
            int r;
            combine(n, s, m->b, k, xn);
            for (r = 0; r < n; r++)
                xn[r] = x[r] + h_try * xn[r];
            if (m->fsal_in_error) {
                n_evals++;
                failed = eval_rhs(inst, t_new, xn, k[s], lam);
            }
        }
        if (!failed) {
            err = error_norm(inst, m, h_try, k, x, xn, xs, e3);
            if (!m->fsal_in_error && err <= 1.0) {
                n_evals++;
                failed = eval_rhs(inst, t_new, xn, k[s], lam);
            }
        }
        if (failed)
            memcpy(model_msg, inst->msg, sizeof model_msg);

        if (failed || !(err <= 1.0)) { /* also catches err = NaN */
            fac = (failed || !isfinite(err)) ? m->fac_min : fmax(m->fac_min, SAFETY * pow(err, expo));
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
        fac = err > 0.0 ? SAFETY * pow(err, expo) : m->fac_max;
        fac = fmin(m->fac_max, fmax(m->fac_min, fac));
        if (rejected_last)
            fac = fmin(fac, 1.0); /* no growth right after a rejection */
        rejected_last = 0;
        memcpy(x, xn, (size_t)n * sizeof(double));
        memcpy(k[0], k[s], (size_t)n * sizeof(double)); /* FSAL */
        t = t_new;
        inst->time = t;

        if (last) {
            double h_new = h_try * fac;
            if (h_try < h) {
                /* the last step was shortened to hit t_end: its capped growth factor understates
                 * the step size the controller wanted; keep the earlier proposal unless the error
                 * estimate of the short step says it is too large */
                double h_opt = err > 0.0 ? SAFETY * h_try * pow(err, expo) : HUGE_VAL;
                h_new = fmax(h_new, fmin(h, h_opt));
            }
            inst->h_next[mi] = h_new;
            break;
        }
        h = h_try * fac;
    }

    *evals = n_evals;
    nhb_log(inst, NHB_OK, "%s: t = %.17g -> %.17g: %s, %ld accepted and %ld rejected steps, %ld model "
            "evaluations, next h = %g", func, t_start, t_end, m->name, n_accepted, n_rejected, n_evals,
            inst->h_next[mi]);
    return NHB_OK;
}

/* The method of the next doStep. Each doStep uses the method that needed fewer model evaluations
 * per unit of time in its latest use; the other one is tried again after NHB_RK_RETRY doSteps, so
 * that the choice follows the tolerance, the communication step size and the dynamics. Costs are
 * compared only once measured with a step size carried over from an earlier doStep (the first use
 * of a method starts with a small initial step and costs more): so the first doSteps use the
 * starting method twice (DOP853 below rtol 1e-9, else DOPRI5), then the other one twice. One step
 * per communication interval costs 6 evaluations with DOPRI5 and 12 with DOP853: DOPRI5 wins at
 * small communication steps and loose tolerances, DOP853 at large steps or tight tolerances. */
static int select_method(const nhb_instance *inst)
{
#if defined(NHB_CS_METHOD) /* for tests and measurements only: -DNHB_CS_METHOD=0 or 1 */
    (void)inst;
    return NHB_CS_METHOD;
#else
    const int first = inst->rtol < 1e-9 ? RK_DOP853 : RK_DOPRI5;
    int best;

    if (!inst->rk_warm[first])
        return first;
    if (!inst->rk_warm[1 - first])
        return 1 - first;
    best = inst->rk_cost[RK_DOP853] < inst->rk_cost[RK_DOPRI5] ? RK_DOP853 : RK_DOPRI5;
    return inst->rk_age[1 - best] >= NHB_RK_RETRY ? 1 - best : best;
#endif
}

nhb_status nhb_do_step(nhb_instance *inst, const char *func, double current_time, double step)
{
    nhb_status status;
    long n_evals = 0;
    int mi, warm;

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
    if (current_time != inst->time) {
        /* adopt the importer's clock; cached evaluations survive a difference of a few ulps (the
         * rounding of current + step), not more */
        if (fabs(current_time - inst->time) > 4.0 * DBL_EPSILON * fabs(inst->time))
            invalidate_caches(inst);
        inst->time = current_time;
    }
    if (step == 0.0)
        return NHB_OK;

    mi = select_method(inst);
    warm = inst->h_next[mi] > 0.0; /* starts from the step size proposed by an earlier doStep */
    status = integrate(inst, func, mi, current_time + step, &n_evals);
    inst->out_valid = 0;
    if (status == NHB_OK) {
        inst->rk_cost[mi] = (double)n_evals / step;
        inst->rk_warm[mi] = warm;
        inst->rk_age[mi] = 0;
        inst->rk_age[1 - mi]++;
    }
    if (status == NHB_OK && NHB_NX > 0) {
        /* the last stage, f(t_end, x), is the state derivative at the new point: cache it */
        memcpy(inst->dx, inst->work, (size_t)NHB_NX * sizeof(double));
        if (NHB_NLAM > 0)
            memcpy(inst->lam, inst->lam_work, (size_t)NHB_NLAM * sizeof(double));
        inst->rhs_valid = 1;
    } else {
        invalidate_caches(inst);
    }
    return status;
}
