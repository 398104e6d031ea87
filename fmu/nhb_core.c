/* nhbridge FMU runtime: instance logic shared by FMI 2.0 and FMI 3.0 (see nhb_core.h). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nhb_core.h"
#include "nhb_split.h"

/* ============================================================================================== */
/* Small helpers                                                                                  */
/* ============================================================================================== */

/* Range of the relative tolerance of the Co-Simulation integrator: below NHB_MIN_RTOL the error
 * estimates drown in round-off (raised to it with a warning); at NHB_MAX_RTOL (100 % relative error)
 * and above the error control accepts any step, so the result means nothing (rejected). */
#define NHB_MIN_RTOL (100.0 * DBL_EPSILON)
#define NHB_MAX_RTOL 1.0

/* Number of elements to allocate for an array of n entries (never 0, so no pointer is NULL). */
static size_t alloc_count(int n)
{
    return n > 0 ? (size_t)n : 1u;
}

static double *alloc_doubles(const nhb_instance *inst, size_t n)
{
    return (double *)inst->alloc_mem(n, sizeof(double));
}

/* A set of states, parameters, inputs or time: the cached evaluations are stale, and the integration
 * point (which may lie past the communication point) no longer continues the trajectory. */
static void invalidate_caches(nhb_instance *inst)
{
    inst->rhs_valid = 0;
    inst->out_valid = 0;
    inst->int_valid = 0;
}

const char *nhb_kind_name(int kind)
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
    case NHB_INDICATOR: return "event indicator";
    case NHB_SWITCH_MODE: return "mode of a switched element";
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
    case NHB_INDICATOR: return nhb_indicator_count();
    case NHB_SWITCH_MODE: return NHB_NSW;
    default: return -1;
    }
}

const nhb_variable *nhb_find_variable(const nhb_instance *inst, const char *func, unsigned int vr,
                                      const char *where)
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
    nhb_log(inst, NHB_ERROR, "%s: unknown value reference %u%s", func, vr, where);
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
    const int counts[] = {NHB_NX, NHB_NQ, NHB_NP, NHB_NIN, NHB_NV, NHB_NY, NHB_NLAM, NHB_NRES, NHB_NVARS, NHB_NSW};

    for (i = 0; i < (int)(sizeof counts / sizeof counts[0]); i++) {
        if (counts[i] < 0) {
            nhb_log(inst, NHB_ERROR, "model.c: negative array size (entry %d of NX, NQ, NP, NIN, NV, "
                    "NY, NLAM, NRES, NVARS, NSW)", i);
            return 0;
        }
    }
    if (NHB_NSW > 0 && !NHB_VELOCITY_STATES) {
        nhb_log(inst, NHB_ERROR, "model.c: switched elements need all velocities as states "
                "(NHB_VELOCITY_STATES = 1)");
        return 0;
    }
    for (i = 0; i < NHB_NSW; i++) {
        if (NHB_SWITCH_KIND[i] < NHB_SW_FRICTION || NHB_SWITCH_KIND[i] > NHB_SW_IDEAL_DIODE ||
            NHB_SWITCH_UNKNOWN[i] < 0 || NHB_SWITCH_UNKNOWN[i] >= NHB_NLAM) {
            nhb_log(inst, NHB_ERROR, "model.c: switched element %d has kind %d and unknown lam[%d] (kinds 0..2, "
                    "unknowns 0..%d)", i, NHB_SWITCH_KIND[i], NHB_SWITCH_UNKNOWN[i], NHB_NLAM - 1);
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
                    "0..%d", i, var->vr, nhb_kind_name(var->kind), var->index, count - 1);
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
    inst->xi = alloc_doubles(inst, alloc_count(NHB_NX));
    inst->fi = alloc_doubles(inst, alloc_count(NHB_NX));
    inst->lam_i = alloc_doubles(inst, alloc_count(NHB_NLAM));
    inst->dense = alloc_doubles(inst, NHB_DENSE_VECTORS * alloc_count(NHB_NX));
    inst->modes = (int *)alloc_mem(alloc_count(NHB_NSW), sizeof(int));
    inst->sw_w = alloc_doubles(inst, alloc_count(NHB_NSW));
    inst->sw_limit = alloc_doubles(inst, alloc_count(NHB_NSW));
    inst->sw_grad = alloc_doubles(inst, alloc_count(NHB_NSW * NHB_NQ));
    inst->ev_x = alloc_doubles(inst, alloc_count(NHB_NX));
    inst->ev_dx = alloc_doubles(inst, alloc_count(NHB_NX));
    inst->ev_lam = alloc_doubles(inst, alloc_count(NHB_NLAM));
    inst->ev_z = alloc_doubles(inst, 4u * alloc_count(nhb_indicator_count()));
    inst->zeno = alloc_doubles(inst, NHB_ZENO_EVENTS);
    if (!inst->x || !inst->p || !inst->in || !inst->dx || !inst->lam || !inst->v || !inst->y || !inst->r ||
        !inst->work || !inst->lam_work || !inst->xi || !inst->fi || !inst->lam_i || !inst->dense || !inst->modes ||
        !inst->sw_w || !inst->sw_limit || !inst->sw_grad || !inst->ev_x || !inst->ev_dx || !inst->ev_lam ||
        !inst->ev_z || !inst->zeno || nhb_part_init(inst)) {
        nhb_log(inst, NHB_ERROR, "out of memory");
        return NHB_ERROR;
    }
    nhb_reset(inst);
    return NHB_OK;
}

static void state_free_all(nhb_instance *inst); /* FMU state section */

void nhb_release(nhb_instance *inst)
{
    double **arrays[] = {&inst->x, &inst->p, &inst->in, &inst->dx, &inst->lam, &inst->v, &inst->y,
                         &inst->r, &inst->work, &inst->lam_work, &inst->xi, &inst->fi, &inst->lam_i,
                         &inst->dense, &inst->jac, &inst->sw_w, &inst->sw_limit, &inst->sw_grad, &inst->ev_x,
                         &inst->ev_dx, &inst->ev_lam, &inst->ev_z, &inst->zeno};
    size_t i;

    if (inst->free_mem == NULL)
        return;
    state_free_all(inst);
    nhb_part_release(inst);
    if (inst->modes != NULL)
        inst->free_mem(inst->modes);
    inst->modes = NULL;
    for (i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        if (*arrays[i] != NULL)
            inst->free_mem(*arrays[i]);
        *arrays[i] = NULL;
    }
    if (inst->name != NULL)
        inst->free_mem(inst->name);
    inst->name = NULL;
}

static void first_modes(nhb_instance *inst); /* switched elements' section */

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
    inst->t_int = 0.0;
    inst->dense_t0 = inst->dense_h = 0.0;
    inst->dense_method = 0;
    inst->h_next[0] = inst->h_next[1] = 0.0;
    inst->rk_evals[0] = inst->rk_evals[1] = 0.0;
    inst->rk_span[0] = inst->rk_span[1] = 0.0;
    inst->rk_steps[0] = inst->rk_steps[1] = 0;
    inst->rk_age[0] = inst->rk_age[1] = 0;
    inst->rk_settled[0] = inst->rk_settled[1] = 0;
    inst->rk_last = -1;
    inst->split_sign = 0;
    nhb_part_reset(inst); /* the split of build time */
    first_modes(inst); /* until initialization */
    inst->mode = NHB_MODE_INSTANTIATED;
    invalidate_caches(inst);
}

/* ============================================================================================== */
/* Model evaluation                                                                               */
/* ============================================================================================== */

int nhb_model_failed(nhb_instance *inst, const char *function, int rc)
{
    inst->msg[sizeof inst->msg - 1] = '\0';
    if (rc != 0 && inst->msg[0] == '\0')
        snprintf(inst->msg, sizeof inst->msg, "%s failed (code %d) without a message", function, rc);
    return rc != 0;
}

/* Index of the first non-finite entry of a[0..n), or -1. */
static int first_non_finite(const double *a, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (!isfinite(a[i]))
            return i;
    return -1;
}

/* " (<name>, value reference <vr>)" of the variable of the given kind and index, for messages. The
 * value reference is that of the first table entry (modelDescription.xml maps it to the name); the
 * name, for states and their derivatives, follows from NHB_COORDINATE_NAMES as the generator names
 * them: positions q, velocity states der(q) (when all velocities are states), derivatives der(q) and
 * der(q,2). Parts that are unknown are left out (empty when both are). */
static const char *vr_note(char *buf, size_t len, int kind, int index)
{
    const char *name = "";
    int i, order = 0;
    unsigned int vr = 0;
    int has_vr = 0;

    buf[0] = '\0';
    for (i = 0; i < NHB_NVARS && !has_vr; i++) {
        if (NHB_VARIABLES[i].kind == kind && NHB_VARIABLES[i].index == index) {
            vr = NHB_VARIABLES[i].vr;
            has_vr = 1;
        }
    }
    if ((kind == NHB_STATE || kind == NHB_DERIVATIVE) && index >= 0) {
        int q = index < NHB_NQ ? index : (NHB_VELOCITY_STATES && index - NHB_NQ < NHB_NQ ? index - NHB_NQ : -1);
        if (q >= 0 && NHB_COORDINATE_NAMES[q] != NULL)
            name = NHB_COORDINATE_NAMES[q];
        order = (index >= NHB_NQ) + (kind == NHB_DERIVATIVE);
    }
    if (name[0] != '\0') {
        const char *open = order == 0 ? "" : "der(", *close = order == 0 ? "" : order == 1 ? ")" : ",2)";
        if (has_vr)
            snprintf(buf, len, " (%s%s%s, value reference %u)", open, name, close, vr);
        else
            snprintf(buf, len, " (%s%s%s)", open, name, close);
    } else if (has_vr) {
        snprintf(buf, len, " (value reference %u)", vr);
    }
    return buf;
}

static int split_crossed(nhb_instance *inst, double t, const double *x);

/* nhb_rhs() at (t, x) with the instance's parameters and inputs, plus a finiteness check of the
 * state it gets and of the results. Returns 0, or 1 with the reason in inst->msg. */
static int eval_rhs(nhb_instance *inst, double t, const double *x, double *dx, double *lam)
{
    char note[160];
    int i;

    inst->msg[0] = '\0';
    if ((i = first_non_finite(x, NHB_NX)) >= 0) {
        snprintf(inst->msg, sizeof inst->msg, "non-finite state x[%d]%s = %g", i,
                 vr_note(note, sizeof note, NHB_STATE, i), x[i]);
        return 1;
    }
    if (NHB_REPARTITION) { /* reduced forms that re-partition: the current split (nhb_split.c) */
        if (nhb_part_rhs(inst, t, x, dx))
            return 1;
    } else if (nhb_model_failed(inst, "nhb_rhs", nhb_rhs(t, x, inst->p, inst->in, inst->modes, dx, lam, inst->msg,
                                                         sizeof inst->msg)))
        return 1;
    if (split_crossed(inst, t, x))
        return 1;
    if ((i = first_non_finite(dx, NHB_NX)) >= 0) {
        snprintf(inst->msg, sizeof inst->msg, "non-finite state derivative dx[%d]%s = %g", i,
                 vr_note(note, sizeof note, NHB_DERIVATIVE, i), dx[i]);
        return 1;
    }
    if ((i = first_non_finite(lam, NHB_NLAM)) >= 0) {
        snprintf(inst->msg, sizeof inst->msg, "non-finite multiplier lambda[%d]%s = %g", i,
                 vr_note(note, sizeof note, NHB_MULTIPLIER, i), lam[i]);
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
    int failed, i = -1, kind = NHB_VELOCITY;
    const char *what = "";
    const double *a = inst->v;
    char note[160];

    if (inst->out_valid)
        return NHB_OK;
    if (NHB_OUTPUTS_USE_LAM && ensure_rhs(inst, func) != NHB_OK) /* outputs that contain efforts */
        return NHB_ERROR;
    inst->msg[0] = '\0';
    if (NHB_REPARTITION)
        failed = nhb_part_outputs(inst, inst->time, inst->x, inst->v, inst->y, inst->r);
    else
        failed = nhb_model_failed(inst, "nhb_outputs",
                                  nhb_outputs(inst->time, inst->x, inst->p, inst->in,
                                              NHB_OUTPUTS_USE_LAM ? inst->lam : NULL, inst->v, inst->y, inst->r,
                                              inst->msg, sizeof inst->msg));
    if (!failed) {
        if ((i = first_non_finite(inst->v, NHB_NV)) >= 0)
            what = "velocity v";
        else if ((i = first_non_finite(inst->y, NHB_NY)) >= 0)
            what = "output y", a = inst->y, kind = NHB_OUTPUT;
        else if ((i = first_non_finite(inst->r, NHB_NRES)) >= 0)
            what = "constraint residual r", a = inst->r, kind = NHB_RESIDUAL;
        if (i >= 0) {
            snprintf(inst->msg, sizeof inst->msg, "non-finite %s[%d]%s = %g", what, i,
                     vr_note(note, sizeof note, kind, i), a[i]);
            failed = 1;
        }
    }
    if (failed) {
        nhb_log(inst, NHB_ERROR, "%s: model evaluation failed at t = %.17g: %s", func, inst->time, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        return NHB_ERROR;
    }
    inst->out_valid = 1;
    return NHB_OK;
}

/* ============================================================================================== */
/* Switched elements: modes, event indicators and the switching logic (see nhb_model.h)            */
/* ============================================================================================== */

static nhb_status current_indicators(nhb_instance *inst, const char *func);

/* Every element in the mode whose row the derived equations hold (stick, conducting); no switches yet. */
static void first_modes(nhb_instance *inst)
{
    int k;

    for (k = 0; k < NHB_NSW; k++)
        inst->modes[k] = NHB_SWITCH_KIND[k] == NHB_SW_FRICTION ? NHB_STICK : NHB_ON;
    inst->events = 0;
}

/* The mode names of an element kind, for messages. */
static const char *switch_mode_name(int k, int mode)
{
    if (NHB_SWITCH_KIND[k] == NHB_SW_FRICTION)
        return mode == NHB_STICK ? "stick" : mode == NHB_SLIP_POS ? "slip+" : "slip-";
    return mode == NHB_ON ? "conducting" : "blocking";
}

/* nhb_switching at (t, x): w, limit and dw/dder(q) into inst->sw_*. Returns 0, or 1 with inst->msg. */
static int eval_switching(nhb_instance *inst, double t, const double *x)
{
    int k;

    inst->msg[0] = '\0';
    if (nhb_model_failed(inst, "nhb_switching", nhb_switching(t, x, inst->p, inst->in, inst->sw_w, inst->sw_limit,
                                                              inst->sw_grad, inst->msg, sizeof inst->msg)))
        return 1;
    for (k = 0; k < NHB_NSW; k++) {
        if (!isfinite(inst->sw_w[k]) || !isfinite(inst->sw_limit[k])) {
            snprintf(inst->msg, sizeof inst->msg, "the switching quantities of %s are not finite at t = %.17g "
                     "(w = %g, limit = %g)", NHB_SWITCH_NAMES[k], t, inst->sw_w[k], inst->sw_limit[k]);
            return 1;
        }
    }
    return 0;
}

/* The event indicators at (t, x) from lam (nhb_rhs in the current modes at the same point), each positive
 * while its element's mode holds:
 *   friction   stick: mu_s N - |F|;   slip s (+1, -1): s w   (w the relative velocity);
 *   diode      conducting: w = i - G_off V_f;   blocking: V_f - v   (v the diode voltage).
 * A friction element whose stick limit mu_s N is negative (its normal force turned negative: the generated
 * elements have mu_s > 0) has at most that limit as its indicator, so that the crossing is located like a
 * switch and reported there (negative_normal). Returns 0, or 1 with inst->msg. */
static int indicators(nhb_instance *inst, double t, const double *x, const double *lam, double *z)
{
    int k;

    if (NHB_REPARTITION && nhb_part_indicator(inst, t, x, &z[NHB_NSW])) /* the split's, after the elements' */
        return 1;
    if (NHB_NSW == 0)
        return 0;
    if (eval_switching(inst, t, x))
        return 1;
    for (k = 0; k < NHB_NSW; k++) {
        const double u = lam[NHB_SWITCH_UNKNOWN[k]], w = inst->sw_w[k], limit = inst->sw_limit[k];
        const int mode = inst->modes[k];
        if (NHB_SWITCH_KIND[k] == NHB_SW_FRICTION) {
            z[k] = mode == NHB_STICK ? limit - fabs(u) : (double)mode * w;
            if (limit < 0.0)
                z[k] = fmin(z[k], limit);
        } else {
            z[k] = mode == NHB_ON ? w : limit - u;
        }
    }
    return 0;
}

/* Coulomb friction needs a normal force N >= 0: 1 with inst->msg when the stick limit mu_s N of a friction
 * element is negative at t (inst->sw_limit from eval_switching at t), else 0. The native simulation stops with
 * the same message (bridge.simulation.events). */
static int negative_normal(nhb_instance *inst, double t)
{
    int k;

    for (k = 0; k < NHB_NSW; k++) {
        if (NHB_SWITCH_KIND[k] == NHB_SW_FRICTION && inst->sw_limit[k] < 0.0) {
            snprintf(inst->msg, sizeof inst->msg, "the normal force of the friction element %s turns negative at "
                     "t = %.12g (its stick limit mu_static*N = %g there); Coulomb friction needs a normal force "
                     "N >= 0 (a contact that lifts off, N < 0, is a different model)", NHB_SWITCH_NAMES[k], t,
                     inst->sw_limit[k]);
            return 1;
        }
    }
    return 0;
}

/* The unknown of element k (friction force, diode voltage) at (t, x) with k in `mode` and the others in
 * their current modes. Returns 0, or 1 with inst->msg. */
static int unknown_in_mode(nhb_instance *inst, double t, const double *x, int k, int mode, double *u)
{
    const int saved = inst->modes[k];
    int failed;

    inst->modes[k] = mode;
    failed = eval_rhs(inst, t, x, inst->ev_dx, inst->ev_lam);
    inst->modes[k] = saved;
    *u = inst->ev_lam[NHB_SWITCH_UNKNOWN[k]];
    return failed;
}

/* Element k's mode where its w = 0 (bridge.simulation.events._Modes.decide): friction sticks if the force
 * that keeps w = 0 is within mu_s N, else slips against it; a diode blocks unless the blocking voltage would
 * exceed V_f. inst->sw_limit must hold the limits at (t, x). Returns 0, or 1 with inst->msg. */
static int decide_mode(nhb_instance *inst, double t, const double *x, int k, int *mode)
{
    double u;

    if (NHB_SWITCH_KIND[k] != NHB_SW_FRICTION) {
        if (unknown_in_mode(inst, t, x, k, NHB_OFF, &u))
            return 1;
        *mode = u > inst->sw_limit[k] ? NHB_ON : NHB_OFF;
        return 0;
    }
    if (unknown_in_mode(inst, t, x, k, NHB_STICK, &u))
        return 1;
    *mode = fabs(u) <= inst->sw_limit[k] ? NHB_STICK : u > 0.0 ? NHB_SLIP_NEG : NHB_SLIP_POS;
    return 0;
}

/* The mode after element k's event at (t, x) (bridge.simulation.events._Modes.after); lam: nhb_rhs in the
 * current modes there. Returns 0, or 1 with inst->msg. */
static int mode_after(nhb_instance *inst, double t, const double *x, const double *lam, int k, int *mode)
{
    const int kind = NHB_SWITCH_KIND[k], current = inst->modes[k];

    if (kind != NHB_SW_FRICTION) { /* with G_off > 0 both branches meet at the switch (v = V_f, i = G_off V_f) */
        if (current == NHB_OFF)
            *mode = NHB_ON;
        else if (kind == NHB_SW_DIODE)
            *mode = NHB_OFF;
        else
            return decide_mode(inst, t, x, k, mode);
        return 0;
    }
    if (current == NHB_STICK) { /* the static limit reached: slip against the sticking force */
        *mode = lam[NHB_SWITCH_UNKNOWN[k]] > 0.0 ? NHB_SLIP_NEG : NHB_SLIP_POS;
        return 0;
    }
    return decide_mode(inst, t, x, k, mode);
}

/* Whether entering `mode` holds element k's w at 0 (stick, the ideal diode's blocking). */
static int mode_holds(int k, int mode)
{
    return NHB_SWITCH_KIND[k] == NHB_SW_FRICTION ? mode == NHB_STICK
                                                 : NHB_SWITCH_KIND[k] == NHB_SW_IDEAL_DIODE && mode == NHB_OFF;
}

/* Move the velocities of x (least change along g = dw_k/dder(q), from inst->sw_grad at x) so that w_k = 0. */
static void project_onto_held(nhb_instance *inst, double *x, int k)
{
    const double *g = inst->sw_grad + (size_t)k * NHB_NQ;
    double gg = 0.0;
    int i;

    for (i = 0; i < NHB_NQ; i++)
        gg += g[i] * g[i];
    if (!(gg > 0.0))
        return;
    for (i = 0; i < NHB_NQ; i++)
        x[NHB_NQ + i] -= inst->sw_w[k] * g[i] / gg;
}

/* The span over which chattering is judged: the experiment's, else max(1, |t|). */
static double zeno_window(const nhb_instance *inst, double t)
{
    const double span = inst->stop_time_defined && inst->stop_time > inst->start_time
                            ? inst->stop_time - inst->start_time : fmax(1.0, fabs(t));
    return NHB_ZENO_WINDOW * span;
}

/* How to leave chattering, as the native simulation says it. */
#define NHB_CHATTER_HINT "give friction elements a regularization velocity (regularization = 1e-4 in the [friction] " \
                         "entry) to use the smooth law instead of events, and diodes a positive on_resistance and " \
                         "off_conductance"

/* The message of an element that cannot keep any mode at t: the mode its indicator leaves is the one the
 * switching rules choose again (friction that slips back into the stick test, which sends it the same way: a
 * Filippov sliding mode), so the native simulation sees a Zeno sequence of switches at one instant. */
static void chatter_message(nhb_instance *inst, int k, double t)
{
    snprintf(inst->msg, sizeof inst->msg, "%s chatters at t = %.12g (a Zeno sequence): its indicator leaves the mode %s, "
             "and the switching rules choose %s again at once; " NHB_CHATTER_HINT, NHB_SWITCH_NAMES[k], t,
             switch_mode_name(k, inst->modes[k]), switch_mode_name(k, inst->modes[k]));
}

/* Record a switch of element k at t. Returns 0, or 1 with inst->msg when it makes more than NHB_ZENO_EVENTS
 * switches within the Zeno window (as bridge.simulation.events, whose message it follows). */
static int record_switch(nhb_instance *inst, double t, int k)
{
    const int slot = (int)(inst->events % NHB_ZENO_EVENTS);
    const double window = zeno_window(inst, t);

    if (inst->events >= NHB_ZENO_EVENTS && t - inst->zeno[slot] <= window) {
        snprintf(inst->msg, sizeof inst->msg, "%s chatters: %d switches within %.3g s at t = %.12g (a Zeno "
                 "sequence); " NHB_CHATTER_HINT, NHB_SWITCH_NAMES[k], NHB_ZENO_EVENTS + 1, window, t);
        return 1;
    }
    inst->zeno[slot] = t;
    inst->events++;
    return 0;
}

/* Handle the events at (t, x) in place: while some element that has not switched at this instant has a negative
 * or zero indicator (zero: a crossing that the importer's root finder located exactly), switch the first such
 * element (mode_after), projecting the velocities when it enters a held mode, and evaluate again. An element
 * switches at most once per instant: the mode it enters starts on its switching surface (slip after stick at
 * w = 0, up to round-off), so the sign of its new indicator there means nothing; where the new mode cannot
 * hold, its indicator turns negative at once and the next crossing says so (chattering). An element whose mode
 * would not change although its indicator is negative is chattering: an error. *projected: a projection
 * changed x. Returns 0, or 1 with inst->msg (a failed evaluation, chattering, or modes that do not settle). */
static int switch_at(nhb_instance *inst, const char *func, double t, double *x, int *projected)
{
    const int nz = nhb_indicator_count(); /* the elements, then the split (NHB_REPARTITION) */
    double *z = inst->ev_z, *done = inst->ev_z + nz; /* per element: 0, 1 switched, 2 left alone */
    int iter, k, mode;

    *projected = 0;
    for (k = 0; k < nz; k++)
        done[k] = 0.0;
    for (iter = 0;; iter++) {
        if (eval_rhs(inst, t, x, inst->ev_dx, inst->ev_lam) || indicators(inst, t, x, inst->ev_lam, z) ||
            negative_normal(inst, t))
            return 1;
        for (k = 0; k < nz && !(done[k] == 0.0 && z[k] <= 0.0); k++)
            ;
        if (k == nz)
            return 0;
        if (k == NHB_NSW) { /* the split's health fell below the threshold: a new split, the slots re-initialized */
            if (nhb_part_change(inst, func, t, x))
                return 1;
            done[k] = 1.0;
            *projected = 1;
            continue;
        }
        if (iter >= NHB_EVENT_ITER_MAX) {
            snprintf(inst->msg, sizeof inst->msg, "the modes of the switched elements do not settle at t = %.17g "
                     "(%d switches at this instant; %s still has indicator %g)", t, iter, NHB_SWITCH_NAMES[k], z[k]);
            return 1;
        }
        if (mode_after(inst, t, x, inst->ev_lam, k, &mode))
            return 1;
        if (mode == inst->modes[k]) {
            if (z[k] < 0.0) { /* the mode is violated but the switching rules keep it: a sliding mode */
                chatter_message(inst, k, t);
                return 1;
            }
            done[k] = 2.0; /* touching 0 without a switch: left alone at this instant */
            continue;
        }
        done[k] = 1.0;
        if (record_switch(inst, t, k))
            return 1;
        nhb_log(inst, NHB_OK, "%s: t = %.17g: %s %s -> %s", func, t, NHB_SWITCH_NAMES[k],
                switch_mode_name(k, inst->modes[k]), switch_mode_name(k, mode));
        inst->modes[k] = mode;
        if (mode_holds(k, mode)) {
            project_onto_held(inst, x, k); /* inst->sw_grad is at x (indicators above) */
            *projected = 1;
        }
    }
}

nhb_status nhb_completed_step(nhb_instance *inst, const char *func, int *enter_event_mode)
{
    int k;

    *enter_event_mode = 0;
    if (nhb_indicator_count() == 0)
        return NHB_OK;
    if (current_indicators(inst, func) != NHB_OK)
        return NHB_ERROR;
    for (k = 0; k < nhb_indicator_count(); k++)
        *enter_event_mode |= inst->ev_z[k] < 0.0;
    return NHB_OK;
}

nhb_status nhb_event_update(nhb_instance *inst, const char *func, int *states_changed)
{
    int projected = 0;

    *states_changed = 0;
    if (nhb_indicator_count() == 0)
        return NHB_OK;
    if (switch_at(inst, func, inst->time, inst->x, &projected)) {
        nhb_log(inst, NHB_ERROR, "%s: event handling failed at t = %.17g: %s", func, inst->time, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        invalidate_caches(inst);
        return NHB_ERROR;
    }
    invalidate_caches(inst); /* the modes may have changed */
    *states_changed = projected;
    return NHB_OK;
}

/* Elements in a held mode (stick, an ideal diode blocking) keep w at 0 only while nothing else moves it: after
 * the importer set inputs, parameters or states (e.g. a belt speed that jumps at a communication point) the
 * velocities of x are projected onto w = 0 again (least change). Returns 0, or 1 with inst->msg. */
static int hold_modes(nhb_instance *inst, double t, double *x, int *projected)
{
    int k;

    *projected = 0;
    for (k = 0; k < NHB_NSW; k++) {
        if (!mode_holds(k, inst->modes[k]))
            continue;
        if (eval_switching(inst, t, x))
            return 1;
        if (inst->sw_w[k] != 0.0) {
            project_onto_held(inst, x, k);
            *projected = 1;
        }
    }
    return 0;
}

/* The modes at the start (bridge.simulation.events.initial_modes): friction slips with the sign of its
 * relative velocity where that is not 0, else by the stick test; a diode conducts where i - G_off V_f > 0,
 * else by its blocking voltage. Entering a held mode projects the velocities. Returns 0, or 1 with
 * inst->msg. */
static int initial_modes(nhb_instance *inst)
{
    double *w0 = inst->ev_z + NHB_NSW;
    int k, mode;

    first_modes(inst);
    if (NHB_NSW == 0)
        return 0;
    if (eval_switching(inst, inst->time, inst->x) || negative_normal(inst, inst->time))
        return 1;
    memcpy(w0, inst->sw_w, (size_t)NHB_NSW * sizeof(double)); /* w at the start */
    for (k = 0; k < NHB_NSW; k++) {
        const double w = w0[k];
        if (NHB_SWITCH_KIND[k] == NHB_SW_FRICTION)
            inst->modes[k] = w > 0.0 ? NHB_SLIP_POS : w < 0.0 ? NHB_SLIP_NEG : NHB_STICK;
    }
    for (k = 0; k < NHB_NSW; k++) {
        const double w = w0[k];
        if ((NHB_SWITCH_KIND[k] != NHB_SW_FRICTION && !(w > 0.0)) ||
            (NHB_SWITCH_KIND[k] == NHB_SW_FRICTION && w == 0.0)) {
            if (decide_mode(inst, inst->time, inst->x, k, &mode))
                return 1;
            inst->modes[k] = mode;
        }
    }
    for (k = 0; k < NHB_NSW; k++) {
        if (mode_holds(k, inst->modes[k])) {
            if (eval_switching(inst, inst->time, inst->x))
                return 1;
            project_onto_held(inst, inst->x, k);
        }
    }
    return 0;
}

/* ============================================================================================== */
/* Experiment set-up and initialization                                                           */
/* ============================================================================================== */

nhb_status nhb_setup_experiment(nhb_instance *inst, const char *func, int tolerance_defined,
                                double tolerance, double start_time, int stop_time_defined,
                                double stop_time)
{
    const double min_rtol = NHB_MIN_RTOL;

    if (!isfinite(start_time)) {
        nhb_log(inst, NHB_ERROR, "%s: startTime is not finite", func);
        return NHB_ERROR;
    }
    if (stop_time_defined && !(stop_time >= start_time)) {
        nhb_log(inst, NHB_ERROR, "%s: stopTime (%g) is before startTime (%g)", func, stop_time, start_time);
        return NHB_ERROR;
    }
    if (tolerance_defined && !(tolerance > 0.0 && tolerance < NHB_MAX_RTOL)) { /* also NaN */
        nhb_log(inst, NHB_ERROR, "%s: tolerance %g is out of range: a relative tolerance must be positive and "
                "below %g (typical values 1e-4 .. 1e-10)", func, tolerance, NHB_MAX_RTOL);
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

/* ============================================================================================== */
/* Consistent start values                                                                        */
/* ============================================================================================== */

/* At ExitInitializationMode the dependent coordinates of the build-time split (NHB_DEPENDENT, see
 * nhb_model.h) are computed from the others, as the loader does with [method] independent:
 *   positions   Newton on phi(q, t) = 0 in q_dep, the minimum-norm step of a least-squares solve,
 *               dq_dep = J^+ (-phi) with J = d phi/dq_dep (NHOL x NRES): square J: J dq = -phi,
 *               else dq = J^T z with (J J^T) z = -phi; converged at |phi_k| <= NHB_NEWTON_TOL max(1, |q|);
 *   velocities  A_dep der(q)_dep = -(A_ind der(q)_ind + a0) (multiplier forms, whose velocities are states).
 * Both linear systems by nhb_lu_solve (partial pivoting). */
#define NHB_NEWTON_MAX 50     /* Newton iterations (as the loader) */
#define NHB_NEWTON_TOL 1e-14  /* relative to max(1, max |q|) (as the loader) */
#define NHB_NEWTON_FLOOR (4.0 * DBL_EPSILON) /* also converged: steps below this relative to max(1, max |q|) */
#define NHB_NEWTON_ROUNDOFF 1e-10            /* ... with |phi_k| below this relative to max(1, max |q|) */
#define NHB_START_CHECK 1e-8  /* afterwards |A v + a0|_k <= NHB_START_CHECK max(1, sum |A_ki v_i| + |a0_k|) */

typedef struct {
    double *phi, *A, *a0, *M, *b, *x0; /* NHOL, NRES x NQ, NRES, NRES x NRES, NRES, NX (the given state) */
} start_work;

static int is_dependent(int i)
{
    int r;
    for (r = 0; r < NHB_NRES; r++)
        if (NHB_DEPENDENT[r] == i)
            return 1;
    return 0;
}

/* "x, y": the names of the dependent (dependent = 1) or independent (0) coordinates, into buf. */
static const char *coordinate_list(char *buf, size_t len, int dependent)
{
    size_t used = 0;
    int i;
    buf[0] = '\0';
    for (i = 0; i < NHB_NQ && used < len; i++) {
        if (is_dependent(i) != dependent)
            continue;
        used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", NHB_COORDINATE_NAMES[i]);
    }
    return buf;
}

/* Reduced forms (NHB_VELOCITY_STATES == 0) keep the split of build time: their dependent velocities
 * (NHB_DEPENDENT) are solved from A_dep(q, t) at every evaluation, and the generated nhb_rhs fails where
 * the split's health falls below its threshold. An integrator step can jump over that band; then
 * det(A_dep) has changed its sign since the first evaluation after initialization (inst->split_sign) and
 * the evaluation fails naming the time: the FMU cannot re-partition as the native simulation does.
 * Returns 0, or 1 with the reason in inst->msg. */
static int split_crossed(nhb_instance *inst, double t, const double *x)
{
    const int m = NHB_NRES, n = NHB_NQ;
    double *block, *A, *D;
    int sign = 1, i, j, k, p;
    char dep[256];

    if (NHB_VELOCITY_STATES || NHB_REPARTITION || !NHB_HAS_CONSTRAINTS || m == 0)
        return 0;
    block = alloc_doubles(inst, alloc_count(NHB_NHOL) + (size_t)(m * n + m + m * m));
    if (block == NULL) {
        snprintf(inst->msg, sizeof inst->msg, "out of memory");
        return 1;
    }
    A = block + alloc_count(NHB_NHOL);
    D = A + m * n + m;
    if (nhb_constraints(t, x, inst->p, inst->in, block, A, A + m * n, inst->msg, sizeof inst->msg)) {
        inst->free_mem(block);
        return 1;
    }
    for (i = 0; i < m; i++)
        for (j = 0; j < m; j++)
            D[i * m + j] = A[i * n + NHB_DEPENDENT[j]];
    for (k = 0; k < m && sign != 0; k++) { /* sign of det(A_dep): elimination with partial pivoting */
        for (p = k, i = k + 1; i < m; i++)
            if (fabs(D[i * m + k]) > fabs(D[p * m + k]))
                p = i;
        if (!(D[p * m + k] != 0.0)) {
            sign = 0;
            break;
        }
        if (p != k) {
            for (j = 0; j < m; j++) {
                double s = D[k * m + j];
                D[k * m + j] = D[p * m + j];
                D[p * m + j] = s;
            }
            sign = -sign;
        }
        if (D[k * m + k] < 0.0)
            sign = -sign;
        for (i = k + 1; i < m; i++) {
            double f = D[i * m + k] / D[k * m + k];
            for (j = k + 1; j < m; j++)
                D[i * m + j] -= f * D[k * m + j];
        }
    }
    inst->free_mem(block);
    if (inst->split_sign == 0) {
        inst->split_sign = sign;
        return 0;
    }
    if (sign == inst->split_sign)
        return 0;
    snprintf(inst->msg, sizeof inst->msg, "the split of the velocities chosen at build time (dependent %s) is "
             "singular at t = %.17g or was passed just before it (det(A_dep) changed its sign since the start): "
             "this FMU of a reduced method cannot re-partition; export the lagrange form or choose other "
             "independent coordinates", coordinate_list(dep, sizeof dep, 1), t);
    return 1;
}

/* Index of the largest |a[k]| of a[0..n) (0 for n == 0). */
static int largest(const double *a, int n)
{
    int k, worst = 0;
    for (k = 1; k < n; k++)
        if (fabs(a[k]) > fabs(a[worst]))
            worst = k;
    return worst;
}

/* nhb_constraints() at the positions q. Returns 0, or 1 with the reason in inst->msg. */
static int eval_constraints(nhb_instance *inst, const double *q, start_work *w)
{
    const int m = NHB_NRES, n = NHB_NQ;
    int i, k = -1;

    inst->msg[0] = '\0';
    if (nhb_model_failed(inst, "nhb_constraints", nhb_constraints(inst->time, q, inst->p, inst->in, w->phi, w->A,
                                                                  w->a0, inst->msg, sizeof inst->msg)))
        return 1;
    if ((i = first_non_finite(w->phi, NHB_NHOL)) >= 0)
        k = i;
    else if ((i = first_non_finite(w->A, m * n)) >= 0)
        k = i / n;
    else if ((i = first_non_finite(w->a0, m)) >= 0)
        k = i;
    if (k >= 0) {
        snprintf(inst->msg, sizeof inst->msg, "constraint %s is not finite at these positions",
                 NHB_CONSTRAINT_NAMES[k]);
        return 1;
    }
    return 0;
}

/* The velocity residuals A v + a0 at the velocities v (all NQ of them) into out (NRES). */
static void velocity_residuals(const start_work *w, const double *v, double *out)
{
    const int m = NHB_NRES, n = NHB_NQ;
    int k, i;
    for (k = 0; k < m; k++) {
        out[k] = w->a0[k];
        for (i = 0; i < n; i++)
            out[k] += w->A[k * n + i] * v[i];
    }
}

/* Newton on phi(q) = 0 in the dependent positions; on success w->A and w->a0 hold the constraints at
 * the final positions. Returns 0, or 1 after logging why. */
static int project_positions(nhb_instance *inst, const char *func, start_work *w)
{
    const int mh = NHB_NHOL, m = NHB_NRES, n = NHB_NQ;
    double *q = inst->x;
    double given = 0.0, last_step = HUGE_VAL;
    char dep[256], ind[256];
    int it, k, c, r, bad, worst0 = 0;

    for (it = 0;; it++) {
        double scale = 1.0;
        int worst;
        if (eval_constraints(inst, q, w)) {
            nhb_log(inst, NHB_ERROR, "%s: the start positions cannot be made consistent with the holonomic "
                    "constraints at t = %.17g: %s", func, inst->time, inst->msg);
            return 1;
        }
        for (k = 0; k < n; k++)
            scale = fmax(scale, fabs(q[k]));
        worst = largest(w->phi, mh);
        if (it == 0)
            worst0 = worst, given = w->phi[worst];
        if (fabs(w->phi[worst]) <= NHB_NEWTON_TOL * scale)
            return 0;
        if (last_step <= NHB_NEWTON_FLOOR * scale && fabs(w->phi[worst]) <= NHB_NEWTON_ROUNDOFF * scale)
            return 0; /* the steps are at the round-off level of q: phi cannot get smaller */
        if (it == NHB_NEWTON_MAX) {
            nhb_log(inst, NHB_ERROR, "%s: the start values violate constraint %s (residual %.6g) and cannot be "
                    "made consistent: Newton on the dependent positions (%s) did not converge in %d iterations "
                    "(residual of %s: %.6g); the positions of %s count as given: change them or the parameters "
                    "so that the constraints have a solution nearby", func, NHB_CONSTRAINT_NAMES[worst0], given,
                    coordinate_list(dep, sizeof dep, 1), NHB_NEWTON_MAX, NHB_CONSTRAINT_NAMES[worst],
                    w->phi[worst], coordinate_list(ind, sizeof ind, 0));
            return 1;
        }
        if (mh == m) { /* square: J dq = -phi */
            for (k = 0; k < mh; k++) {
                for (r = 0; r < m; r++)
                    w->M[k * m + r] = w->A[k * n + NHB_DEPENDENT[r]];
                w->b[k] = -w->phi[k];
            }
            bad = nhb_lu_solve(m, w->M, w->b);
        } else { /* minimum norm: (J J^T) z = -phi, dq = J^T z */
            for (k = 0; k < mh; k++) {
                for (c = 0; c < mh; c++) {
                    double s = 0.0;
                    for (r = 0; r < m; r++)
                        s += w->A[k * n + NHB_DEPENDENT[r]] * w->A[c * n + NHB_DEPENDENT[r]];
                    w->M[k * mh + c] = s;
                }
                w->b[k] = -w->phi[k];
            }
            bad = nhb_lu_solve(mh, w->M, w->b);
        }
        if (bad) {
            nhb_log(inst, NHB_ERROR, "%s: the start values violate constraint %s (residual %.6g) and cannot be "
                    "made consistent: the holonomic constraints cannot be solved for the dependent positions (%s), "
                    "their Jacobian is singular (pivot %d) at Newton iteration %d; the positions of %s count as "
                    "given: change them or the parameters", func, NHB_CONSTRAINT_NAMES[worst0], given,
                    coordinate_list(dep, sizeof dep, 1), bad, it, coordinate_list(ind, sizeof ind, 0));
            return 1;
        }
        last_step = 0.0;
        for (r = 0; r < m; r++) {
            double step = 0.0;
            if (mh == m)
                step = w->b[r];
            else
                for (k = 0; k < mh; k++)
                    step += w->A[k * n + NHB_DEPENDENT[r]] * w->b[k];
            q[NHB_DEPENDENT[r]] += step;
            last_step = fmax(last_step, fabs(step));
        }
    }
}

/* The dependent velocities from A_dep v_dep = -(A_ind v_ind + a0), with w->A, w->a0 at the current
 * positions, then a check of the residuals. Returns 0, or 1 after logging why. */
static int project_velocities(nhb_instance *inst, const char *func, start_work *w)
{
    const int m = NHB_NRES, n = NHB_NQ;
    double *v = inst->x + n;
    char dep[256], ind[256];
    int k, c, i, bad, worst;

    for (k = 0; k < m; k++) {
        w->b[k] = -w->a0[k];
        for (i = 0; i < n; i++)
            if (!is_dependent(i))
                w->b[k] -= w->A[k * n + i] * v[i];
        for (c = 0; c < m; c++)
            w->M[k * m + c] = w->A[k * n + NHB_DEPENDENT[c]];
    }
    bad = nhb_lu_solve(m, w->M, w->b);
    if (bad) {
        velocity_residuals(w, v, w->M);
        worst = largest(w->M, m);
        nhb_log(inst, NHB_ERROR, "%s: the start values violate constraint %s (residual %.6g) and cannot be made "
                "consistent: at the start positions the constraints cannot be solved for the dependent "
                "velocities (%s), their matrix is singular (pivot %d); the velocities of %s count as given: "
                "change the start positions or the parameters", func, NHB_CONSTRAINT_NAMES[worst], w->M[worst],
                coordinate_list(dep, sizeof dep, 1), bad, coordinate_list(ind, sizeof ind, 0));
        return 1;
    }
    for (c = 0; c < m; c++)
        v[NHB_DEPENDENT[c]] = w->b[c];
    velocity_residuals(w, v, w->M);
    for (k = 0; k < m; k++) {
        double size = fabs(w->a0[k]);
        for (i = 0; i < n; i++)
            size += fabs(w->A[k * n + i] * v[i]);
        if (!(fabs(w->M[k]) <= NHB_START_CHECK * fmax(1.0, size))) { /* also NaN */
            nhb_log(inst, NHB_ERROR, "%s: the start velocities cannot be made consistent with constraint %s: "
                    "residual %.6g after solving for the dependent velocities (%s), the constraints are too "
                    "ill-conditioned in them at the start positions; change the start positions or the "
                    "parameters", func, NHB_CONSTRAINT_NAMES[k], w->M[k], coordinate_list(dep, sizeof dep, 1));
            return 1;
        }
    }
    return 0;
}

/* Make the start state consistent with the constraints (see above). On failure the given state is
 * kept, the reason is logged and the mode becomes Error. */
static nhb_status make_start_consistent(nhb_instance *inst, const char *func)
{
    const int m = NHB_NRES, n = NHB_NQ;
    size_t count;
    double *block;
    start_work w;
    int failed = 0, k;
    double change = 0.0;
    char dep[256];

    if (!NHB_HAS_CONSTRAINTS || m == 0 || (NHB_NHOL == 0 && !NHB_VELOCITY_STATES))
        return NHB_OK;
    count = alloc_count(NHB_NHOL) + (size_t)(m * n + m + m * m + m + NHB_NX);
    block = alloc_doubles(inst, count);
    if (block == NULL) {
        nhb_log(inst, NHB_ERROR, "%s: out of memory", func);
        inst->mode = NHB_MODE_ERROR;
        return NHB_ERROR;
    }
    w.phi = block;
    w.A = w.phi + alloc_count(NHB_NHOL);
    w.a0 = w.A + m * n;
    w.M = w.a0 + m;
    w.b = w.M + m * m;
    w.x0 = w.b + m;
    memcpy(w.x0, inst->x, (size_t)NHB_NX * sizeof(double));

    if (NHB_NHOL > 0)
        failed = project_positions(inst, func, &w);
    else if (eval_constraints(inst, inst->x, &w)) {
        nhb_log(inst, NHB_ERROR, "%s: the start velocities cannot be made consistent with the constraints at "
                "t = %.17g: %s", func, inst->time, inst->msg);
        failed = 1;
    }
    if (!failed && NHB_VELOCITY_STATES)
        failed = project_velocities(inst, func, &w);
    if (failed) {
        memcpy(inst->x, w.x0, (size_t)NHB_NX * sizeof(double));
        inst->mode = NHB_MODE_ERROR;
    } else {
        for (k = 0; k < NHB_NX; k++)
            change = fmax(change, fabs(inst->x[k] - w.x0[k]));
        nhb_log(inst, NHB_OK, "%s: start state made consistent with the constraints: dependent coordinates %s "
                "computed from the others (largest change of a state %.6g)", func,
                coordinate_list(dep, sizeof dep, 1), change);
    }
    inst->free_mem(block);
    invalidate_caches(inst);
    return failed ? NHB_ERROR : NHB_OK;
}

nhb_status nhb_check_initial_point(nhb_instance *inst, const char *func)
{
    if (make_start_consistent(inst, func) != NHB_OK)
        return NHB_ERROR;
    if (initial_modes(inst)) {
        nhb_log(inst, NHB_ERROR, "%s: the initial modes of the switched elements cannot be determined at t = %.17g: "
                "%s", func, inst->time, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        invalidate_caches(inst);
        return NHB_ERROR;
    }
    invalidate_caches(inst);
    inst->split_sign = 0; /* taken at the consistent start state */
    if (ensure_rhs(inst, func) != NHB_OK)
        return NHB_ERROR;
    return ensure_outputs(inst, func);
}

/* The event indicators at the current point into inst->ev_z[0..NSW); on failure log, enter Error mode. */
static nhb_status current_indicators(nhb_instance *inst, const char *func)
{
    if (ensure_rhs(inst, func) != NHB_OK)
        return NHB_ERROR;
    if (indicators(inst, inst->time, inst->x, inst->lam, inst->ev_z)) {
        nhb_log(inst, NHB_ERROR, "%s: model evaluation failed at t = %.17g: %s", func, inst->time, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        return NHB_ERROR;
    }
    return NHB_OK;
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
        const nhb_variable *var = nhb_find_variable(inst, func, vr[i], "");
        if (var == NULL)
            return NHB_ERROR;
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
        case NHB_SWITCH_MODE:
            values[i] = (double)inst->modes[var->index];
            break;
        case NHB_INDICATOR:
            if (current_indicators(inst, func) != NHB_OK)
                return NHB_ERROR;
            values[i] = inst->ev_z[var->index];
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
    int changed = 0;

    if (n == 0)
        return NHB_OK;
    if (vr == NULL)
        return nhb_null_argument(inst, func, "valueReferences");
    if (values == NULL)
        return nhb_null_argument(inst, func, "values");

    /* first check everything, so that a failing call changes nothing */
    for (i = 0; i < n; i++) {
        const nhb_variable *var = nhb_find_variable(inst, func, vr[i], "");
        unsigned modes;
        if (var == NULL)
            return NHB_ERROR;
        modes = settable_modes(var->kind);
        if (var->kind == NHB_VELOCITY && nhb_part_start_slot(var->index) >= 0)
            modes = settable_modes(NHB_STATE); /* the start value of its speed slot (nhb_split.h) */
        if (modes == 0) {
            nhb_log(inst, NHB_ERROR, "%s: value reference %u (%s) cannot be set", func, vr[i],
                    nhb_kind_name(var->kind));
            return NHB_ERROR;
        }
        if (!(inst->mode & modes)) {
            nhb_log(inst, NHB_ERROR, "%s: the %s with value reference %u cannot be set in %s%s", func,
                    nhb_kind_name(var->kind), vr[i], nhb_mode_name(inst->mode),
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
    /* a value set to what it already is (bit for bit) changes nothing: the caches and the integration
     * point stay valid (importers often set every input before every doStep) */
    for (i = 0; i < n; i++) {
        const nhb_variable *var = nhb_find_variable(inst, func, vr[i], ""); /* checked above */
        double *target = var->kind == NHB_STATE ? inst->x : var->kind == NHB_PARAMETER ? inst->p : inst->in;
        int index = var->index;
        if (var->kind == NHB_VELOCITY) /* a speed slot's start value */
            target = inst->x, index = NHB_NQ + nhb_part_start_slot(var->index);
        if (memcmp(&target[index], &values[i], sizeof(double)) != 0) {
            target[index] = values[i];
            changed = 1;
        }
    }
    if (changed)
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
    if (t < inst->start_time) {
        nhb_log(inst, NHB_ERROR, "%s: time %.17g is before startTime %.17g", func, t, inst->start_time);
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
        char note[160];
        nhb_log(inst, NHB_ERROR, "%s: state x[%d]%s = %g is not finite (at t = %.17g; the instance keeps its "
                "states)", func, i, vr_note(note, sizeof note, NHB_STATE, i), x[i], inst->time);
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
    if (check_state_array(inst, func, z, nz, nhb_indicator_count(), "event indicators") != NHB_OK)
        return NHB_ERROR;
    if (nhb_indicator_count() == 0)
        return NHB_OK;
    if (current_indicators(inst, func) != NHB_OK)
        return NHB_ERROR;
    memcpy(z, inst->ev_z, (size_t)nhb_indicator_count() * sizeof(double));
    return NHB_OK;
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

/* Continuous extensions (dense output). DOPRI5: Shampine's quartic (Hairer's contd5, scipy's RK45.P),
 * from the stages of the step and the FSAL stage, no extra evaluation:
 *   x(t0 + s h) = x0 + h sum_j k_j (P[j][0] s + P[j][1] s^2 + P[j][2] s^3 + P[j][3] s^4). */
static const double DP5_P[7][4] = {
    {1.0, -8048581381.0 / 2820520608.0, 8663915743.0 / 2820520608.0, -12715105075.0 / 11282082432.0},
    {0.0, 0.0, 0.0, 0.0},
    {0.0, 131558114200.0 / 32700410799.0, -68118460800.0 / 10900136933.0, 87487479700.0 / 32700410799.0},
    {0.0, -1754552775.0 / 470086768.0, 14199869525.0 / 1410260304.0, -10690763975.0 / 1880347072.0},
    {0.0, 127303824393.0 / 49829197408.0, -318862633887.0 / 49829197408.0, 701980252875.0 / 199316789632.0},
    {0.0, -282668133.0 / 205662961.0, 2019193451.0 / 616988883.0, -1453857185.0 / 822651844.0},
    {0.0, 40617522.0 / 29380423.0, -110615467.0 / 29380423.0, 69997945.0 / 29380423.0},
};

/* DOP853: the 7th-order continuous extension of Hairer's dop853.f (contd8) needs three more stages
 * k[13..15] (at t0 + c h, from k[0..12], k[12] the FSAL stage); the same coefficients as scipy's
 * dop853_coefficients.py (A[13..15], C[13..15], D). With F0 = x1 - x0, F1 = h k0 - F0,
 * F2 = 2 F0 - h (k12 + k0), F3..F6 = h sum_j D[.][j] k_j and s1 = 1 - s:
 *   x(t0 + s h) = x0 + s (F0 + s1 (F1 + s (F2 + s1 (F3 + s (F4 + s1 (F5 + s F6)))))). */
static const double DOP853_C_EXTRA[3] = {0.1, 0.2, 0.777777777777777777777777777778};
static const double DOP853_A_EXTRA[3][16] = {
    {5.61675022830479523392909219681e-2, 0.0, 0.0, 0.0, 0.0, 0.0, 2.53500210216624811088794765333e-1,
     -2.46239037470802489917441475441e-1, -1.24191423263816360469010140626e-1, 1.5329179827876569731206322685e-1,
     8.20105229563468988491666602057e-3, 7.56789766054569976138603589584e-3, -8.298e-3, 0.0, 0.0, 0.0},
    {3.18346481635021405060768473261e-2, 0.0, 0.0, 0.0, 0.0, 2.83009096723667755288322961402e-2,
     5.35419883074385676223797384372e-2, -5.49237485713909884646569340306e-2, 0.0, 0.0,
     -1.08347328697249322858509316994e-4, 3.82571090835658412954920192323e-4, -3.40465008687404560802977114492e-4,
     1.41312443674632500278074618366e-1, 0.0, 0.0},
    {-4.28896301583791923408573538692e-1, 0.0, 0.0, 0.0, 0.0, -4.69762141536116384314449447206,
     7.68342119606259904184240953878, 4.06898981839711007970213554331, 3.56727187455281109270669543021e-1, 0.0,
     0.0, 0.0, -1.39902416515901462129418009734e-3, 2.9475147891527723389556272149, -9.15095847217987001081870187138,
     0.0},
};
static const double DOP853_D[4][16] = {
    {-0.84289382761090128651353491142e+1, 0.0, 0.0, 0.0, 0.0, 0.56671495351937776962531783590,
     -0.30689499459498916912797304727e+1, 0.23846676565120698287728149680e+1, 0.21170345824450282767155149946e+1,
     -0.87139158377797299206789907490, 0.22404374302607882758541771650e+1, 0.63157877876946881815570249290,
     -0.88990336451333310820698117400e-1, 0.18148505520854727256656404962e+2, -0.91946323924783554000451984436e+1,
     -0.44360363875948939664310572000e+1},
    {0.10427508642579134603413151009e+2, 0.0, 0.0, 0.0, 0.0, 0.24228349177525818288430175319e+3,
     0.16520045171727028198505394887e+3, -0.37454675472269020279518312152e+3, -0.22113666853125306036270938578e+2,
     0.77334326684722638389603898808e+1, -0.30674084731089398182061213626e+2, -0.93321305264302278729567221706e+1,
     0.15697238121770843886131091075e+2, -0.31139403219565177677282850411e+2, -0.93529243588444783865713862664e+1,
     0.35816841486394083752465898540e+2},
    {0.19985053242002433820987653617e+2, 0.0, 0.0, 0.0, 0.0, -0.38703730874935176555105901742e+3,
     -0.18917813819516756882830838328e+3, 0.52780815920542364900561016686e+3, -0.11573902539959630126141871134e+2,
     0.68812326946963000169666922661e+1, -0.10006050966910838403183860980e+1, 0.77771377980534432092869265740,
     -0.27782057523535084065932004339e+1, -0.60196695231264120758267380846e+2, 0.84320405506677161018159903784e+2,
     0.11992291136182789328035130030e+2},
    {-0.25693933462703749003312586129e+2, 0.0, 0.0, 0.0, 0.0, -0.15418974869023643374053993627e+3,
     -0.23152937917604549567536039109e+3, 0.35763911791061412378285349910e+3, 0.93405324183624310003907691704e+2,
     -0.37458323136451633156875139351e+2, 0.10409964950896230045147246184e+3, 0.29840293426660503123344363579e+2,
     -0.43533456590011143754432175058e+2, 0.96324553959188282948394950600e+2, -0.39177261675615439165231486172e+2,
     -0.14972683625798562581422125276e+3},
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
    if (sum5 == HUGE_VAL || sum3 == HUGE_VAL) {
        /* squares beyond the double range (derivatives near 1e300): the same norms, scaled by the
         * largest ratio, so that only a really infinite or NaN estimate rejects the step */
        double scale = 0.0;
        for (i = 0; i < n; i++) {
            double sk = error_scale(inst, i, x[i], xn[i]);
            scale = fmax(scale, fabs(e5[i] / sk));
            if (m->e3 != NULL)
                scale = fmax(scale, fabs(e3[i] / sk));
        }
        if (scale > 0.0 && isfinite(scale)) {
            sum5 = sum3 = 0.0;
            for (i = 0; i < n; i++) {
                double sk = error_scale(inst, i, x[i], xn[i]) * scale;
                sum5 += (e5[i] / sk) * (e5[i] / sk);
                if (m->e3 != NULL)
                    sum3 += (e3[i] / sk) * (e3[i] / sk);
            }
            if (m->e3 == NULL)
                return fabs(h) * scale * sqrt(sum5 / n);
            return fabs(h) * scale * sum5 / sqrt(n * (sum5 + 0.01 * sum3));
        }
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
    h1 = fmin(fmin(100.0 * h0, h1), span);
    /* |f| / scale beyond ~1e154 overflows the norms and gives 0: start at the smallest normal step */
    return h1 > 0.0 ? h1 : fmin(DBL_MIN, span);
}

/* Prepare the dense output of the accepted step of method mi from (t, x0) over h to x1, with the
 * stages k[0..s] (k[s] = f(t + h, x1)). DOP853 evaluates its three extra stages here (counted in
 * *n_evals; xs is scratch; their multipliers go to inst->lam, whose cache is cleared: the state at
 * the communication point is about to change); returns 1 if one of them fails (inst->msg says why). */
static int dense_prepare(nhb_instance *inst, int mi, double t, double h, const double *x0, const double *x1,
                         double *const *k, double *xs, long *n_evals)
{
    const int n = NHB_NX;
    double *d = inst->dense;
    int i, j, r;

    memcpy(d, x0, (size_t)n * sizeof(double));
    if (mi == RK_DOPRI5) {
        for (j = 0; j < 4; j++) {
            double w[7], *q = d + (size_t)(j + 1) * n;
            for (i = 0; i < 7; i++)
                w[i] = DP5_P[i][j];
            combine(n, 7, w, k, q);
            for (r = 0; r < n; r++)
                q[r] *= h;
        }
    } else {
        double *f[4];
        for (i = 0; i < 3; i++) {
            const int s = 13 + i;
            combine(n, s, DOP853_A_EXTRA[i], k, xs);
            for (r = 0; r < n; r++)
                xs[r] = x0[r] + h * xs[r];
            ++*n_evals;
            inst->rhs_valid = 0;
            if (eval_rhs(inst, t + DOP853_C_EXTRA[i] * h, xs, k[s], inst->lam))
                return 1;
        }
        for (r = 0; r < n; r++) {
            double dx = x1[r] - x0[r], bspl = h * k[0][r] - dx;
            d[n + r] = dx;
            d[2 * n + r] = bspl;
            d[3 * n + r] = dx - h * k[12][r] - bspl; /* = 2 dx - h (k12 + k0) */
        }
        for (j = 0; j < 4; j++) {
            f[j] = d + (size_t)(4 + j) * n;
            combine(n, 16, DOP853_D[j], k, f[j]);
            for (r = 0; r < n; r++)
                f[j][r] *= h;
        }
    }
    inst->dense_t0 = t;
    inst->dense_h = h;
    inst->dense_method = mi;
    return 0;
}

/* x at time t inside the step of the dense output. */
static void dense_eval(const nhb_instance *inst, double t, double *x)
{
    const int n = NHB_NX;
    const double *d = inst->dense, s = (t - inst->dense_t0) / inst->dense_h, s1 = 1.0 - s;
    int r;

    if (inst->dense_method == RK_DOPRI5) {
        for (r = 0; r < n; r++)
            x[r] = d[r] + s * (d[n + r] + s * (d[2 * n + r] + s * (d[3 * n + r] + s * d[4 * n + r])));
    } else {
        for (r = 0; r < n; r++) {
            const double *c = d + r;
            x[r] = c[0] + s * (c[n] + s1 * (c[2 * n] + s * (c[3 * n] + s1 * (c[4 * n] + s * (c[5 * n] +
                   s1 * (c[6 * n] + s * c[7 * n]))))));
        }
    }
}

/* Statistics of one integrate() call. */
typedef struct {
    long accepted[2], rejected, evals, dense_evals; /* accepted steps per method */
    long events;                                    /* events located (and handled, unless stopped at one) */
} rk_stats;

/* After an accepted step t -> t + h (x0 -> x1; f(t + h, x1) was evaluated with its multipliers in
 * inst->lam_work, and inst->lam_i holds those at (t, x0)): 0 if no event indicator is negative at t + h;
 * else 1 with the earliest sign change, tau in [t, t + h], its element in *element and x(tau) in
 * inst->ev_x. Each crossing is located on the step's dense output by the Illinois method (regula falsi
 * with halving of the stale end, a bisection where it stalls) to 4 ulps of t; tau is the right end of the
 * final bracket, where the indicator is not positive, so that the switch condition holds there. Returns -1 with
 * inst->msg when the model fails. */
static int locate_event(nhb_instance *inst, int mi, double t, double h, const double *x0, const double *x1,
                        double *const *k, double *xs, rk_stats *st, double *tau, int *element)
{
    const int nz = nhb_indicator_count();
    double *zm = inst->ev_z, *z0 = inst->ev_z + 2 * nz, *z1 = inst->ev_z + 3 * nz;
    const double t1 = t + h, tol = 4.0 * DBL_EPSILON * fmax(fabs(t), fabs(t1));
    double best = HUGE_VAL;
    int j, any = 0;

    if (indicators(inst, t1, x1, inst->lam_work, z1))
        return -1;
    for (j = 0; j < nz; j++)
        any |= z1[j] <= 0.0;
    if (!any)
        return 0;
    if (indicators(inst, t, x0, inst->lam_i, z0))
        return -1;
    for (j = 0, any = 0; j < nz; j++) /* a crossing: negative at the end, or 0 there after positive */
        any |= z1[j] < 0.0 || (z1[j] == 0.0 && z0[j] > 0.0);
    if (!any)
        return 0;
    if (dense_prepare(inst, mi, t, h, x0, x1, k, xs, &st->evals))
        return -1;
    st->dense_evals += mi == RK_DOP853 ? 3 : 0;
    for (j = 0; j < nz; j++) {
        double a = t, b = t1, ga = z0[j], gb = z1[j];
        int side = 0, iter;
        if (!(z1[j] < 0.0 || (z1[j] == 0.0 && z0[j] > 0.0)))
            continue;
        if (ga < 0.0) /* negative already at the start (left alone there): the crossing is there */
            b = t;
        else if (gb == 0.0) /* exactly at the end of the step */
            a = t1;
        for (iter = 0; iter < 200 && b - a > tol && b < best; iter++) {
            double m = (a * gb - b * ga) / (gb - ga), gm;
            if (!(m > a && m < b) || iter % 8 == 7) /* stalled or out of the bracket: bisect */
                m = 0.5 * (a + b);
            dense_eval(inst, m, inst->ev_x);
            st->evals++;
            if (eval_rhs(inst, m, inst->ev_x, inst->ev_dx, inst->ev_lam) ||
                indicators(inst, m, inst->ev_x, inst->ev_lam, zm))
                return -1;
            gm = zm[j];
            if (gm <= 0.0) {
                b = m, gb = gm;
                if (side == -1)
                    ga *= 0.5;
                side = -1;
            } else {
                a = m, ga = gm;
                if (side == 1)
                    gb *= 0.5;
                side = 1;
            }
        }
        if (b < best) {
            best = b;
            *element = j;
        }
    }
    *tau = best;
    if (best == t1)
        memcpy(inst->ev_x, x1, (size_t)NHB_NX * sizeof(double));
    else if (best == t)
        memcpy(inst->ev_x, x0, (size_t)NHB_NX * sizeof(double));
    else
        dense_eval(inst, best, inst->ev_x);
    return 1;
}

/* The method of the next step. It is the one with fewer model evaluations per unit of integrated
 * time in its latest measurement (NHB_RK_MEASURE accepted steps, counted once its step size has
 * settled: after the first accepted step whose growth was not capped or that was cut short to end on
 * a communication point); the other one is measured
 * again after NHB_RK_RETRY accepted steps, so that the choice follows the tolerance, the
 * communication step size and the dynamics. The first steps measure the starting method (DOP853
 * below rtol 1e-9, else DOPRI5), then the other one. Methods change only between steps: the
 * integration point (x, f(t, x)) is the same for both. */
static int select_method(const nhb_instance *inst)
{
#if defined(NHB_CS_METHOD) /* for tests and measurements only: -DNHB_CS_METHOD=0 or 1 */
    (void)inst;
    return NHB_CS_METHOD;
#else
    const int first = inst->rtol < 1e-9 ? RK_DOP853 : RK_DOPRI5;
    int best;

    if (inst->rk_steps[first] < NHB_RK_MEASURE)
        return first;
    if (inst->rk_steps[1 - first] < NHB_RK_MEASURE)
        return 1 - first;
    best = inst->rk_evals[RK_DOP853] / inst->rk_span[RK_DOP853] <
           inst->rk_evals[RK_DOPRI5] / inst->rk_span[RK_DOPRI5] ? RK_DOP853 : RK_DOPRI5;
    return inst->rk_age[1 - best] >= NHB_RK_RETRY ? 1 - best : best;
#endif
}

/* Switch to (or continue with) method mi at the integration point: a method that was not the
 * latest one starts a new cost measurement. Returns its first step size: the one it proposed
 * last, or Hairer's initial step (one evaluation, counted in st) if it has none. */
static double start_method(nhb_instance *inst, int mi, double target, double *x1, double *f1, rk_stats *st)
{
    if (inst->rk_last != mi) {
        inst->rk_evals[mi] = inst->rk_span[mi] = 0.0;
        inst->rk_steps[mi] = 0;
        inst->rk_settled[mi] = 0;
        inst->rk_age[mi] = 0;
        inst->rk_last = mi;
    }
    if (inst->h_next[mi] > 0.0)
        return inst->h_next[mi];
    return initial_step(inst, &RK_METHODS[mi], inst->t_int, inst->xi, inst->fi, target - inst->t_int, x1, f1,
                        &st->evals);
}

/* Integrate from the integration point (t_int, xi, fi) until a step reaches target (> t_int),
 * choosing the method per step (select_method). Without overshoot the last step ends exactly on
 * target (stretched by up to 1 % rather than leaving a sliver). With overshoot the steps keep their
 * size: the last one may end past target (never past stopTime, when defined and >= target), and
 * its dense output is prepared; a step that would end within 1 % of target still ends on it. If
 * the integration point is not valid it is first set to (time, x), with f from the cache or one
 * evaluation. On failure the integration point is the last accepted step, inst->mode is Error and
 * the reason is logged. */
static nhb_status integrate(nhb_instance *inst, const char *func, double target, int overshoot, int stop_at_event,
                            int *stopped, rk_stats *st)
{
    const int n = NHB_NX;
    double *k[NHB_RK_EXT_STAGES];
    double *xs = inst->work + (size_t)(NHB_RK_EXT_STAGES - 1) * n; /* stage state */
    double *xn = xs + n, *e3 = xn + n;                               /* new state, error scratch */
    double *x = inst->xi, *lam = inst->lam_work;
    double t_limit = target, t, h;
    double t_start;
    int rejected_last = 0, i, mi;
    const rk_method *m;
    char model_msg[NHB_MSG_LEN] = ""; /* last failure of the model at a trial point */

    memset(st, 0, sizeof *st);
    *stopped = 0;
    if (!inst->int_valid) {
        /* start at the communication point; f from the cache (the last stage of the previous
         * doStep, or an evaluation by a getter) unless states, parameters, inputs or time were set */
        inst->t_int = inst->time;
        if (n > 0)
            memcpy(inst->xi, inst->x, (size_t)n * sizeof(double));
        if (inst->rhs_valid) {
            if (n > 0)
                memcpy(inst->fi, inst->dx, (size_t)n * sizeof(double));
            if (NHB_NLAM > 0)
                memcpy(inst->lam_i, inst->lam, (size_t)NHB_NLAM * sizeof(double));
        } else if (n > 0) {
            st->evals++;
            if (eval_rhs(inst, inst->t_int, inst->xi, inst->fi, inst->lam_i)) {
                nhb_log(inst, NHB_ERROR, "%s: model evaluation failed at t = %.17g: %s", func, inst->t_int,
                        inst->msg);
                inst->mode = NHB_MODE_ERROR;
                return NHB_ERROR;
            }
        }
        inst->int_valid = 1;
    }
    t_start = t = inst->t_int;
    if (n == 0) {
        inst->t_int = target;
        return NHB_OK;
    }
    if (overshoot && inst->stop_time_defined)
        t_limit = fmax(inst->stop_time, target);
    else if (overshoot)
        t_limit = HUGE_VAL;
    k[0] = inst->fi;
    for (i = 1; i < NHB_RK_EXT_STAGES; i++)
        k[i] = inst->work + (size_t)(i - 1) * n;

    mi = select_method(inst);
    m = &RK_METHODS[mi];
    h = start_method(inst, mi, target, xs, k[1], st);

    for (;;) {
        const int s = m->stages;
        const double expo = -1.0 / (m->error_order + 1);
        const long evals_before = st->evals;
        double h_try, t_new, err = 0.0, fac, fac_raw;
        int failed = 0;

        if (st->accepted[0] + st->accepted[1] + st->rejected >= NHB_MAX_STEPS) {
            nhb_log(inst, NHB_ERROR, "%s: maximum number of integration steps (%ld) reached at t = %.17g "
                    "(h = %g) before the communication point %.17g (about %.2g more steps of this size); use "
                    "shorter communication steps", func, NHB_MAX_STEPS, t, h, target,
                    fmin((target - t) / h, DBL_MAX));
            inst->mode = NHB_MODE_ERROR;
            return NHB_ERROR;
        }

        /* where the step ends: exactly on t_limit rather than past it or a sliver before it; exactly
         * on target if within 1 % of it (no sliver before it, no dense output just past it) */
        if (t + 1.01 * h >= t_limit) {
            h_try = t_limit - t;
            t_new = t_limit;
        } else if (fabs(t + h - target) <= 0.01 * h) {
            h_try = target - t;
            t_new = target;
        } else {
            h_try = h;
            t_new = t + h;
        }
        if (!(t_new > t)) { /* the step is lost in the round-off of t: no progress */
            nhb_log(inst, NHB_ERROR, "%s: step size too small (h = %g) at t = %.17g%s%s", func, h, t,
                    model_msg[0] ? "; the model fails near this point: " : "", model_msg);
            inst->mode = NHB_MODE_ERROR;
            return NHB_ERROR;
        }

        /* stages 1..s-1; a failing model evaluation rejects the step like a too-large error */
        for (i = 1; i < s && !failed; i++) {
            int r;
            combine(n, i, m->a + i * (i - 1) / 2, k, xs);
            for (r = 0; r < n; r++)
                xs[r] = x[r] + h_try * xs[r];
            st->evals++;
            failed = eval_rhs(inst, t + m->c[i] * h_try, xs, k[i], lam);
        }
        if (!failed) {
            int r;
            combine(n, s, m->b, k, xn);
            for (r = 0; r < n; r++)
                xn[r] = x[r] + h_try * xn[r];
            if (m->fsal_in_error) {
                st->evals++;
                failed = eval_rhs(inst, t_new, xn, k[s], lam);
            }
        }
        if (!failed) {
            err = error_norm(inst, m, h_try, k, x, xn, xs, e3);
            if (!m->fsal_in_error && err <= 1.0) {
                st->evals++;
                failed = eval_rhs(inst, t_new, xn, k[s], lam);
            }
        }
        if (failed)
            memcpy(model_msg, inst->msg, sizeof model_msg);
        else if (err <= 1.0 && t_new > target) {
            /* accepted; it passes the communication point: its dense output (DOP853: 3 evaluations) */
            const long before = st->evals;
            if (dense_prepare(inst, mi, t, h_try, x, xn, k, xs, &st->evals)) {
                /* the model fails inside the step: do it again, ending exactly on target */
                nhb_log(inst, NHB_OK, "%s: dense output of the step %.17g -> %.17g failed (%s); ending the "
                        "step at %.17g instead", func, t, t_new, inst->msg, target);
                st->dense_evals += st->evals - before;
                t_limit = target;
                h = target - t;
                continue;
            }
            st->dense_evals += st->evals - before;
        }
        if (inst->rk_settled[mi])
            inst->rk_evals[mi] += (double)(st->evals - evals_before);

        if (failed || !(err <= 1.0)) { /* also catches err = NaN */
            fac = (failed || !isfinite(err)) ? m->fac_min : fmax(m->fac_min, SAFETY * pow(err, expo));
            h = h_try * fac;
            st->rejected++;
            rejected_last = 1;
            /* too small: below the round-off of t (Hairer's test; relative to t and not to the
             * communication step, so that a huge step ends on the step limit with that message), or
             * below the smallest normal double near t = 0 */
            if (h < fmax(16.0 * DBL_EPSILON * fmax(fabs(t), fabs(t_start)), DBL_MIN)) {
                nhb_log(inst, NHB_ERROR, "%s: step size too small (h = %g) at t = %.17g%s%s", func, h, t,
                        model_msg[0] ? "; the model fails near this point: " : "", model_msg);
                inst->mode = NHB_MODE_ERROR;
                return NHB_ERROR;
            }
            continue;
        }

        /* accepted */
        st->accepted[mi]++;
        fac_raw = err > 0.0 ? SAFETY * pow(err, expo) : HUGE_VAL;
        fac = fmin(m->fac_max, fmax(m->fac_min, fac_raw));
        if (rejected_last)
            fac = fmin(fac, 1.0); /* no growth right after a rejection */
        rejected_last = 0;
        if (inst->rk_settled[mi]) {
            inst->rk_span[mi] += h_try;
            if (++inst->rk_steps[mi] >= 4 * NHB_RK_MEASURE) { /* a sliding measurement: halve the history */
                inst->rk_evals[mi] *= 0.5;
                inst->rk_span[mi] *= 0.5;
                inst->rk_steps[mi] /= 2;
            }
        } else if (fac_raw < m->fac_max || h_try < h) {
            /* the step size no longer grows at the cap (or the step was cut short to end on the
             * communication point, which then limits it): measure from now on */
            inst->rk_settled[mi] = 1;
        }
        inst->rk_age[1 - mi]++;

        if (nhb_indicator_count() > 0) { /* an event inside the step: the integration point moves there */
            double tau = t_new;
            int element = 0, found, mode = 0, projected = 0;
            found = locate_event(inst, mi, t, h_try, x, xn, k, xs, st, &tau, &element);
            if (found > 0 && (eval_rhs(inst, tau, inst->ev_x, inst->ev_dx, inst->ev_lam) ||
                              indicators(inst, tau, inst->ev_x, inst->ev_lam, inst->ev_z)))
                found = -1;
            if (found > 0 && negative_normal(inst, tau)) {
                nhb_log(inst, NHB_ERROR, "%s: %s", func, inst->msg);
                inst->mode = NHB_MODE_ERROR;
                return NHB_ERROR;
            }
            if (found > 0 && mode_after(inst, tau, inst->ev_x, inst->ev_lam, element, &mode))
                found = -1;
            if (found < 0) {
                nhb_log(inst, NHB_ERROR, "%s: locating an event in the step %.17g -> %.17g failed: %s", func, t,
                        t_new, inst->msg);
                inst->mode = NHB_MODE_ERROR;
                return NHB_ERROR;
            }
            if (found > 0 && mode == inst->modes[element]) { /* the mode is left but chosen again: chattering */
                chatter_message(inst, element, tau);
                nhb_log(inst, NHB_ERROR, "%s: %s", func, inst->msg);
                inst->mode = NHB_MODE_ERROR;
                return NHB_ERROR;
            }
            if (found > 0) {
                st->events++;
                memcpy(x, inst->ev_x, (size_t)n * sizeof(double));
                t = tau;
                inst->t_int = tau;
                if (!stop_at_event && switch_at(inst, func, tau, x, &projected)) {
                    nhb_log(inst, NHB_ERROR, "%s: event handling failed at t = %.17g: %s", func, tau, inst->msg);
                    inst->mode = NHB_MODE_ERROR;
                    return NHB_ERROR;
                }
                st->evals++;
                if (eval_rhs(inst, tau, x, k[0], inst->lam_i)) {
                    nhb_log(inst, NHB_ERROR, "%s: model evaluation failed after the event at t = %.17g: %s", func,
                            tau, inst->msg);
                    inst->mode = NHB_MODE_ERROR;
                    return NHB_ERROR;
                }
                /* the step size control starts afresh in the new modes */
                inst->h_next[0] = inst->h_next[1] = 0.0;
                if (stop_at_event) {
                    *stopped = 1;
                    break;
                }
                if (t >= target)
                    break;
                h = start_method(inst, mi, target, xs, k[1], st);
                rejected_last = 0;
                continue;
            }
        }
        memcpy(x, xn, (size_t)n * sizeof(double));
        memcpy(k[0], k[s], (size_t)n * sizeof(double)); /* FSAL: fi = f(t_new, x_new) */
        if (NHB_NLAM > 0)
            memcpy(inst->lam_i, inst->lam_work, (size_t)NHB_NLAM * sizeof(double));
        t = t_new;
        inst->t_int = t;

        if (t >= target) {
            double h_new = h_try * fac;
            if (h_try < h) {
                /* the last step was shortened to end on target or t_limit: its capped growth factor
                 * understates the step size the controller wanted; keep the earlier proposal unless
                 * the error estimate of the short step says it is too large */
                double h_opt = err > 0.0 ? SAFETY * h_try * pow(err, expo) : HUGE_VAL;
                h_new = fmax(h_new, fmin(h, h_opt));
            }
            inst->h_next[mi] = h_new;
            break;
        }
        h = h_try * fac;

        /* the method of the next step */
        {
            const int next = select_method(inst);
            if (next != mi) {
                inst->h_next[mi] = h;
                mi = next;
                m = &RK_METHODS[mi];
                h = start_method(inst, mi, target, xs, k[1], st);
                rejected_last = 0;
            }
        }
    }
    return NHB_OK;
}

nhb_status nhb_do_step(nhb_instance *inst, const char *func, double current_time, double step, int stop_at_event,
                       int *stopped_at_event)
{
    double target;
    int stopped = 0;

    *stopped_at_event = 0;
    if (!isfinite(current_time) || !isfinite(step) || step < 0.0 || !isfinite(current_time + step)) {
        nhb_log(inst, NHB_ERROR, "%s: invalid communication point %g or step size %g (both must be finite, the "
                "step size not negative, and their sum finite)", func, current_time, step);
        return NHB_ERROR;
    }
    /* the importer's time and ours differ at most by accumulated round-off */
    if (fabs(current_time - inst->time) > 1e-10 * fmax(1.0, fabs(inst->time))) {
        nhb_log(inst, NHB_ERROR, "%s: currentCommunicationPoint %.17g does not match the time of the FMU "
                "%.17g", func, current_time, inst->time);
        return NHB_ERROR;
    }
    if (current_time != inst->time) {
        /* adopt the importer's clock; cached evaluations and the integration point survive a
         * difference of a few ulps (the rounding of current + step), not more */
        if (fabs(current_time - inst->time) > 4.0 * DBL_EPSILON * fabs(inst->time))
            invalidate_caches(inst);
        inst->time = current_time;
    }
    target = current_time + step;
    if (target == current_time) /* a zero step, or one lost in the round-off of the time: nothing to do */
        return NHB_OK;

    if (NHB_NSW > 0 && !inst->int_valid) { /* something was set: the held modes hold w at 0 again */
        int projected = 0;
        if (hold_modes(inst, inst->time, inst->x, &projected)) {
            nhb_log(inst, NHB_ERROR, "%s: model evaluation failed at t = %.17g: %s", func, inst->time, inst->msg);
            inst->mode = NHB_MODE_ERROR;
            return NHB_ERROR;
        }
        if (projected) {
            nhb_log(inst, NHB_OK, "%s: t = %.17g: velocities projected onto the held modes after a set", func,
                    inst->time);
            invalidate_caches(inst);
        }
    }
    if (inst->int_valid && target <= inst->t_int) {
        /* inside the step already computed: nothing to integrate */
        if (target < inst->t_int)
            nhb_log(inst, NHB_OK, "%s: t = %.17g -> %.17g: from the dense output of the %s step %.17g -> "
                    "%.17g", func, current_time, target, RK_METHODS[inst->dense_method].name, inst->dense_t0,
                    inst->t_int);
    } else {
        /* past the communication point only if nothing was set since the previous doStep (an
         * importer that sets inputs before every doStep would discard every overshoot), and never with
         * switched elements (an event past the communication point would have to be undone) */
        const int overshoot = inst->int_valid && nhb_indicator_count() == 0;
        rk_stats st;
        nhb_status status = integrate(inst, func, target, overshoot, stop_at_event, &stopped, &st);

        if (status != NHB_OK) {
            /* the last accepted step (or the communication point) */
            if (inst->int_valid && NHB_NX > 0) {
                inst->time = inst->t_int;
                memcpy(inst->x, inst->xi, (size_t)NHB_NX * sizeof(double));
            }
            invalidate_caches(inst);
            return status;
        }
        nhb_log(inst, NHB_OK, "%s: t = %.17g -> %.17g: %ld accepted (DOPRI5 %ld, DOP853 %ld) and %ld rejected "
                "steps, %ld model evaluations (%ld for dense output), integrated to %.17g, next %s h = %g; %ld "
                "events%s", func, current_time, target, st.accepted[0] + st.accepted[1], st.accepted[RK_DOPRI5],
                st.accepted[RK_DOP853], st.rejected, st.evals, st.dense_evals, inst->t_int,
                inst->rk_last >= 0 ? RK_METHODS[inst->rk_last].name : "-",
                inst->rk_last >= 0 ? inst->h_next[inst->rk_last] : 0.0, st.events,
                stopped ? " (stopped at the first, for the importer's Event Mode)" : "");
        if (stopped) {
            target = inst->t_int;
            *stopped_at_event = 1;
        }
    }

    /* the state at the communication point: the integration point, or the dense output */
    inst->time = target;
    inst->out_valid = 0;
    if (NHB_NX == 0) {
        inst->rhs_valid = 0;
    } else if (target == inst->t_int) {
        memcpy(inst->x, inst->xi, (size_t)NHB_NX * sizeof(double));
        memcpy(inst->dx, inst->fi, (size_t)NHB_NX * sizeof(double));
        if (NHB_NLAM > 0)
            memcpy(inst->lam, inst->lam_i, (size_t)NHB_NLAM * sizeof(double));
        inst->rhs_valid = 1;
    } else {
        /* derivatives, multipliers, outputs and residuals are evaluated at this state on demand */
        dense_eval(inst, target, inst->x);
        inst->rhs_valid = 0;
    }
    return NHB_OK;
}

/* ============================================================================================== */
/* FMU state: get, set, serialize                                                                 */
/* ============================================================================================== */

/* Layout of a state (all integers little or big endian as the platform, read with memcpy):
 *   [0, 8)    magic "NHBSTATE"
 *   [8, 12)   uint32 format version (NHB_STATE_VERSION)
 *   [12, 16)  uint32 length L of the GUID
 *   [16, 24)  uint64 total size in bytes
 *   [24, 32)  uint64 checksum: 64-bit FNV-1a of all other bytes
 *   [32, ...) the GUID (L bytes, zero-padded to a multiple of 8), the array sizes (9 int64: NX, NQ,
 *             NP, NIN, NV, NY, NLAM, NRES, NSW), then the fields of visit_state (int64 and double).
 * Version 2 added NSW, the modes of the switched elements, the switch count and the times of the latest
 * switches (Zeno detection); version 3 the current split of the velocities of a model that re-partitions
 * (NHB_REPARTITION: NQ int64 flags, 1 for a dependent coordinate, and the sign of det(A_dep)). */
#define NHB_STATE_MAGIC "NHBSTATE"
#define NHB_STATE_VERSION 3u
#define NHB_STATE_HEADER 32u

typedef unsigned long long nhb_u64;

enum { SER_SIZE, SER_WRITE, SER_CHECK, SER_READ };

typedef struct {
    int op;                   /* SER_SIZE: count bytes; SER_WRITE: instance -> buffer; SER_CHECK: validate
                                 the buffer without changing the instance; SER_READ: buffer -> instance */
    unsigned char *out;       /* SER_WRITE */
    const unsigned char *in;  /* SER_CHECK, SER_READ */
    size_t pos;
    unsigned allowed_modes;   /* SER_CHECK: the modes the state may carry */
    int interface;            /* SER_CHECK: the interface the state must have (-1: any) */
    const char *bad;          /* SER_CHECK: name of the first invalid field */
} ser_ctx;

static size_t guid_padded(void)
{
    return (strlen(NHB_GUID) + 7u) / 8u * 8u;
}

static nhb_u64 fnv1a(nhb_u64 h, const unsigned char *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* Checksum of a state of `size` bytes: everything but the checksum field. */
static nhb_u64 state_checksum(const unsigned char *p, size_t size)
{
    nhb_u64 h = 14695981039346656037ull;
    h = fnv1a(h, p, 24);
    return fnv1a(h, p + NHB_STATE_HEADER, size - NHB_STATE_HEADER);
}

static void ser_int(ser_ctx *c, const char *name, long long *v, long long lo, long long hi)
{
    long long tmp;
    switch (c->op) {
    case SER_WRITE:
        memcpy(c->out + c->pos, v, sizeof tmp);
        break;
    case SER_CHECK: /* into the shadow instance of state_check, for the checks across fields */
        memcpy(&tmp, c->in + c->pos, sizeof tmp);
        if ((tmp < lo || tmp > hi) && c->bad == NULL)
            c->bad = name;
        *v = tmp;
        break;
    case SER_READ:
        memcpy(v, c->in + c->pos, sizeof tmp);
        break;
    default:
        break;
    }
    c->pos += sizeof tmp;
}

/* n doubles; with `finite`, SER_CHECK rejects non-finite values and copies them into a when it is
 * not NULL (the scalars of the shadow instance; its arrays are NULL) */
static void ser_doubles(ser_ctx *c, const char *name, double *a, int n, int finite)
{
    size_t bytes = n > 0 ? (size_t)n * sizeof(double) : 0u;
    int i;
    switch (c->op) {
    case SER_WRITE:
        if (bytes)
            memcpy(c->out + c->pos, a, bytes);
        break;
    case SER_CHECK:
        for (i = 0; finite && i < n; i++) {
            double d;
            memcpy(&d, c->in + c->pos + (size_t)i * sizeof d, sizeof d);
            if (!isfinite(d) && c->bad == NULL)
                c->bad = name;
        }
        if (a != NULL && bytes)
            memcpy(a, c->in + c->pos, bytes);
        break;
    case SER_READ:
        if (bytes)
            memcpy(a, c->in + c->pos, bytes);
        break;
    default:
        break;
    }
    c->pos += bytes;
}

/* An integer field of any integer type, through a long long. */
#define SER_INT(c, field, lo, hi)                                   \
    do {                                                            \
        long long v_ = (long long)(field);                          \
        ser_int((c), #field, &v_, (lo), (hi));                      \
        if ((c)->op == SER_READ || (c)->op == SER_CHECK)            \
            (field) = v_;                                           \
    } while (0)

/* Everything after the header and the GUID: the array sizes, then the fields. SER_CHECK runs on a
 * zeroed shadow instance (array pointers NULL): it reads the flags, counters and scalars into it, so
 * that the cached results are checked for finiteness exactly where the flags read before them mark
 * them valid (an invalid cache may hold anything, e.g. the NaN of a failed evaluation). */
static void visit_state(nhb_instance *inst, ser_ctx *c)
{
    const int nx = NHB_NX, nlam = NHB_NLAM;
    const long long counts[9] = {NHB_NX, NHB_NQ, NHB_NP, NHB_NIN, NHB_NV, NHB_NY, NHB_NLAM, NHB_NRES, NHB_NSW};
    int i;

    for (i = 0; i < 9; i++) {
        long long v = counts[i];
        ser_int(c, "array sizes (NX, NQ, NP, NIN, NV, NY, NLAM, NRES, NSW)", &v, counts[i], counts[i]);
    }
    SER_INT(c, inst->interface, NHB_ME, NHB_CS);
    if (c->op == SER_CHECK && c->bad == NULL && c->interface >= 0) {
        long long interface;
        memcpy(&interface, c->in + c->pos - sizeof interface, sizeof interface);
        if (interface != c->interface)
            c->bad = c->interface == NHB_ME ? "interface (a Co-Simulation state for a Model Exchange instance)"
                                            : "interface (a Model Exchange state for a Co-Simulation instance)";
    }
    SER_INT(c, inst->mode, 1, NHB_MODE_ANY);
    if (c->op == SER_CHECK && c->bad == NULL) {
        long long mode;
        memcpy(&mode, c->in + c->pos - sizeof mode, sizeof mode);
        if ((mode & (mode - 1)) != 0 || !((unsigned)mode & c->allowed_modes))
            c->bad = "mode (not one allowed for this instance here)";
    }
    SER_INT(c, inst->stop_time_defined, 0, 1);
    SER_INT(c, inst->rhs_valid, 0, 1);
    SER_INT(c, inst->out_valid, 0, 1);
    SER_INT(c, inst->int_valid, 0, 1);
    SER_INT(c, inst->dense_method, 0, 1);
    SER_INT(c, inst->rk_last, -1, 1);
    for (i = 0; i < 2; i++) {
        SER_INT(c, inst->rk_settled[i], 0, 1);
        SER_INT(c, inst->rk_steps[i], 0, 4 * NHB_RK_MEASURE - 1); /* halved when it reaches 4 * MEASURE */
        SER_INT(c, inst->rk_age[i], 0, 0x7fffffffffffffffLL);
    }
    ser_doubles(c, "time", &inst->time, 1, 1);
    ser_doubles(c, "start_time", &inst->start_time, 1, 1);
    ser_doubles(c, "stop_time", &inst->stop_time, 1, 1);
    ser_doubles(c, "rtol", &inst->rtol, 1, 1);
    ser_doubles(c, "atol", &inst->atol, 1, 1);
    ser_doubles(c, "t_int", &inst->t_int, 1, 1);
    ser_doubles(c, "dense_t0", &inst->dense_t0, 1, 1);
    ser_doubles(c, "dense_h", &inst->dense_h, 1, 1);
    ser_doubles(c, "h_next", inst->h_next, 2, 1);
    ser_doubles(c, "rk_evals", inst->rk_evals, 2, 1);
    ser_doubles(c, "rk_span", inst->rk_span, 2, 1);
    ser_doubles(c, "states", inst->x, nx, 1);
    ser_doubles(c, "parameters", inst->p, NHB_NP, 1);
    ser_doubles(c, "inputs", inst->in, NHB_NIN, 1);
    ser_doubles(c, "dx (marked valid)", inst->dx, nx, inst->rhs_valid);
    ser_doubles(c, "lambda (marked valid)", inst->lam, nlam, inst->rhs_valid);
    ser_doubles(c, "v (marked valid)", inst->v, NHB_NV, inst->out_valid);
    ser_doubles(c, "y (marked valid)", inst->y, NHB_NY, inst->out_valid);
    ser_doubles(c, "r (marked valid)", inst->r, NHB_NRES, inst->out_valid);
    ser_doubles(c, "xi", inst->xi, nx, 1);
    ser_doubles(c, "fi (marked valid)", inst->fi, nx, inst->int_valid);
    ser_doubles(c, "lam_i (marked valid)", inst->lam_i, nlam, inst->int_valid);
    ser_doubles(c, "dense (in use)", inst->dense, NHB_DENSE_VECTORS * nx,
                inst->int_valid && inst->t_int > inst->time);
    for (i = 0; i < NHB_NSW; i++) { /* a friction element's modes are -1, 0, 1; a diode's 0, 1 */
        if (c->op == SER_CHECK || c->op == SER_SIZE) { /* the shadow and the dummy instance have no arrays */
            long long v = 0;
            ser_int(c, "modes of the switched elements", &v, NHB_SWITCH_KIND[i] == NHB_SW_FRICTION ? -1 : 0, 1);
        } else {
            SER_INT(c, inst->modes[i], -1, 1);
        }
    }
    SER_INT(c, inst->events, 0, 0x7fffffffffffffffLL);
    ser_doubles(c, "times of the latest switches", inst->zeno, NHB_NSW > 0 ? NHB_ZENO_EVENTS : 0, 1);
    if (NHB_REPARTITION) { /* the current split (nhb_split.c): NQ flags with NRES set, the sign of det(A_dep) */
        long long set = 0;
        for (i = 0; i < NHB_NQ; i++) {
            long long v = c->op == SER_CHECK || c->op == SER_SIZE ? 0 : inst->split_dep[i];
            ser_int(c, "the split of the velocities", &v, 0, 1);
            if (c->op == SER_READ)
                inst->split_dep[i] = (int)v;
            set += v;
        }
        if (c->op == SER_CHECK && c->bad == NULL && set != NHB_NRES)
            c->bad = "the split of the velocities (not NRES dependent coordinates)";
        SER_INT(c, inst->split_sign, -1, 1);
    }
}

/* Size in bytes of a state of this model. */
static size_t state_bytes(void)
{
    ser_ctx c;
    nhb_instance dummy;
    memset(&c, 0, sizeof c);
    memset(&dummy, 0, sizeof dummy);
    c.op = SER_SIZE;
    visit_state(&dummy, &c);
    return NHB_STATE_HEADER + guid_padded() + c.pos;
}

/* The first inconsistency across the fields of a state read into the shadow s (after every field
 * passed its own range check), written into buf; NULL if there is none. These are the invariants
 * the runtime keeps: a tolerance in the range nhb_setup_experiment accepts, no time before the start
 * time, an integration point not behind the communication point and, when it lies ahead, the dense
 * output of a step from at most the communication point to it, and a consistent cost measurement. */
static const char *state_inconsistency(const nhb_instance *s, char *buf, size_t len)
{
    const double slack = 8.0 * DBL_EPSILON * fmax(fabs(s->time), fabs(s->t_int)); /* round-off of times */
    int i;

    if (!(s->rtol >= NHB_MIN_RTOL && s->rtol < NHB_MAX_RTOL))
        snprintf(buf, len, "rtol = %g (a relative tolerance must lie in [%g, %g))", s->rtol, NHB_MIN_RTOL,
                 NHB_MAX_RTOL);
    else if (!(s->atol > 0.0 && s->atol <= s->rtol))
        snprintf(buf, len, "atol = %g (must be positive and at most rtol = %g)", s->atol, s->rtol);
    else if (s->time < s->start_time)
        snprintf(buf, len, "time = %.17g (before start_time = %.17g)", s->time, s->start_time);
    else if (s->stop_time_defined && s->stop_time < s->start_time)
        snprintf(buf, len, "stop_time = %.17g (before start_time = %.17g)", s->stop_time, s->start_time);
    else if (s->int_valid && s->t_int < s->time - slack)
        snprintf(buf, len, "t_int = %.17g (an integration point before time = %.17g)", s->t_int, s->time);
    else if (s->int_valid && s->t_int > s->time &&
             !(s->dense_h > 0.0 && s->dense_t0 <= s->time + slack &&
               fabs(s->dense_t0 + s->dense_h - s->t_int) <= 1e-9 * s->dense_h + slack))
        snprintf(buf, len, "dense_t0 = %.17g, dense_h = %g (not a step from time = %.17g or before to t_int = "
                 "%.17g)", s->dense_t0, s->dense_h, s->time, s->t_int);
    else
        buf[0] = '\0';
    for (i = 0; i < 2 && buf[0] == '\0'; i++) {
        if (!(s->h_next[i] >= 0.0))
            snprintf(buf, len, "h_next[%d] = %g (negative)", i, s->h_next[i]);
        else if (!(s->rk_evals[i] >= 0.0 && s->rk_span[i] >= 0.0) ||
                 (s->rk_steps[i] > 0 && !(s->rk_span[i] > 0.0)))
            snprintf(buf, len, "rk_evals[%d] = %g, rk_span[%d] = %g (negative, or no span for %ld counted steps)",
                     i, s->rk_evals[i], i, s->rk_span[i], s->rk_steps[i]);
    }
    return buf[0] != '\0' ? buf : NULL;
}

/* Check a state of `size` bytes; log the first problem and return 0, or return 1. */
static int state_check(nhb_instance *inst, const char *func, const unsigned char *p, size_t size,
                       int interface, unsigned allowed_modes)
{
    const size_t expected = state_bytes();
    unsigned version, guid_len;
    nhb_u64 recorded_size, recorded_sum;
    ser_ctx c;
    nhb_instance shadow; /* the fields of the state, for the checks across fields */
    char why[NHB_MSG_LEN];

    if (size < NHB_STATE_HEADER || memcmp(p, NHB_STATE_MAGIC, 8) != 0) {
        nhb_log(inst, NHB_ERROR, "%s: not an FMU state of an nhbridge FMU (%s)", func,
                size < NHB_STATE_HEADER ? "too short" : "wrong magic number");
        return 0;
    }
    memcpy(&version, p + 8, sizeof version);
    memcpy(&guid_len, p + 12, sizeof guid_len);
    memcpy(&recorded_size, p + 16, sizeof recorded_size);
    memcpy(&recorded_sum, p + 24, sizeof recorded_sum);
    if (version != NHB_STATE_VERSION) {
        nhb_log(inst, NHB_ERROR, "%s: FMU state format version %u; this runtime reads version %u", func, version,
                NHB_STATE_VERSION);
        return 0;
    }
    if (recorded_size != (nhb_u64)size) {
        nhb_log(inst, NHB_ERROR, "%s: the FMU state has %lu bytes but records %llu (truncated or extended)", func,
                (unsigned long)size, recorded_size);
        return 0;
    }
    if (state_checksum(p, size) != recorded_sum) {
        nhb_log(inst, NHB_ERROR, "%s: the FMU state is corrupted (checksum mismatch)", func);
        return 0;
    }
    if (guid_len != strlen(NHB_GUID) || size < NHB_STATE_HEADER + (size_t)guid_len ||
        memcmp(p + NHB_STATE_HEADER, NHB_GUID, guid_len) != 0) {
        nhb_log(inst, NHB_ERROR, "%s: the FMU state belongs to a different model (its GUID is not %s)", func,
                NHB_GUID);
        return 0;
    }
    if (size != expected) {
        nhb_log(inst, NHB_ERROR, "%s: the FMU state has %lu bytes, a state of this model %lu", func,
                (unsigned long)size, (unsigned long)expected);
        return 0;
    }
    memset(&c, 0, sizeof c);
    c.op = SER_CHECK;
    c.in = p + NHB_STATE_HEADER + guid_padded();
    c.allowed_modes = allowed_modes;
    c.interface = interface;
    memset(&shadow, 0, sizeof shadow);
    visit_state(&shadow, &c);
    if (c.bad == NULL)
        c.bad = state_inconsistency(&shadow, why, sizeof why);
    if (c.bad != NULL) {
        nhb_log(inst, NHB_ERROR, "%s: the FMU state has an invalid value: %s", func, c.bad);
        return 0;
    }
    return 1;
}

/* Write the instance into p (state_bytes() bytes). */
static void state_write(nhb_instance *inst, unsigned char *p, size_t size)
{
    const unsigned version = NHB_STATE_VERSION, guid_len = (unsigned)strlen(NHB_GUID);
    const nhb_u64 total = (nhb_u64)size;
    nhb_u64 sum;
    ser_ctx c;

    memset(p, 0, size);
    memcpy(p, NHB_STATE_MAGIC, 8);
    memcpy(p + 8, &version, sizeof version);
    memcpy(p + 12, &guid_len, sizeof guid_len);
    memcpy(p + 16, &total, sizeof total);
    memcpy(p + NHB_STATE_HEADER, NHB_GUID, guid_len);
    memset(&c, 0, sizeof c);
    c.op = SER_WRITE;
    c.out = p + NHB_STATE_HEADER + guid_padded();
    visit_state(inst, &c);
    sum = state_checksum(p, size);
    memcpy(p + 24, &sum, sizeof sum);
}

/* Every state handed out lies behind a node of its instance's list (inst->states), in the same
 * allocation: [node, padded to NHB_STATE_NODE bytes][state]. The importer sees the state; FreeFMUState
 * unlinks and frees the allocation, FreeInstance (nhb_release) frees what is left in the list. */
typedef struct state_node {
    nhb_instance *owner;            /* the instance whose list holds it */
    struct state_node *prev, *next;
    nhb_u64 cookie;                 /* NHB_STATE_COOKIE while the state is handed out */
} state_node;

#define NHB_STATE_NODE ((sizeof(state_node) + 15u) / 16u * 16u)
#define NHB_STATE_COOKIE 0x6e68627374617465ull /* "nhbstate" */

static state_node *node_of(const void *state)
{
    return (state_node *)(void *)((unsigned char *)state - NHB_STATE_NODE);
}

/* A new state buffer of state_bytes(), entered in the instance's list; NULL if out of memory. */
static unsigned char *state_new(nhb_instance *inst)
{
    unsigned char *mem = (unsigned char *)inst->alloc_mem(NHB_STATE_NODE + state_bytes(), 1);
    state_node *node = (state_node *)(void *)mem;
    if (mem == NULL)
        return NULL;
    node->owner = inst;
    node->prev = NULL;
    node->next = (state_node *)inst->states;
    node->cookie = NHB_STATE_COOKIE;
    if (node->next != NULL)
        node->next->prev = node;
    inst->states = node;
    return mem + NHB_STATE_NODE;
}

/* Unlink a node from its owner's list and free it with the owner's allocator. */
static void state_node_free(state_node *node)
{
    nhb_instance *owner = node->owner;
    if (node->prev != NULL)
        node->prev->next = node->next;
    else
        owner->states = node->next;
    if (node->next != NULL)
        node->next->prev = node->prev;
    node->cookie = 0;
    owner->free_mem(node);
}

/* Free every state still in the instance's list (FreeInstance). */
static void state_free_all(nhb_instance *inst)
{
    while (inst->states != NULL)
        state_node_free((state_node *)inst->states);
}

/* The state behind a handle, checked to be ours (list node, magic, size recorded), else NULL after
 * logging. */
static const unsigned char *state_handle(nhb_instance *inst, const char *func, const void *state)
{
    const unsigned char *p = (const unsigned char *)state;
    nhb_u64 recorded_size;
    if (p == NULL) {
        nhb_null_argument(inst, func, "FMUState");
        return NULL;
    }
    memcpy(&recorded_size, p + 16, sizeof recorded_size);
    if (node_of(p)->cookie != NHB_STATE_COOKIE || memcmp(p, NHB_STATE_MAGIC, 8) != 0 ||
        recorded_size != (nhb_u64)state_bytes()) {
        nhb_log(inst, NHB_ERROR, "%s: not an FMU state of this FMU", func);
        return NULL;
    }
    return p;
}

/* Storage for a state: `existing` (a state obtained earlier, checked to be ours) to be overwritten, or
 * when it is NULL a new state (state_new). NULL after logging on failure. */
static unsigned char *state_storage(nhb_instance *inst, const char *func, void *existing)
{
    unsigned char *p;
    if (existing != NULL)
        return state_handle(inst, func, existing) == NULL ? NULL : (unsigned char *)existing;
    p = state_new(inst);
    if (p == NULL)
        nhb_log(inst, NHB_ERROR, "%s: out of memory", func);
    return p;
}

nhb_status nhb_state_get(nhb_instance *inst, const char *func, void **state)
{
    const size_t size = state_bytes();
    unsigned char *p;

    if (state == NULL)
        return nhb_null_argument(inst, func, "FMUState");
    if ((p = state_storage(inst, func, *state)) == NULL)
        return NHB_ERROR;
    state_write(inst, p, size);
    *state = p;
    return NHB_OK;
}

nhb_status nhb_state_set(nhb_instance *inst, const char *func, const void *state, unsigned allowed_modes)
{
    const unsigned char *p = state_handle(inst, func, state);
    ser_ctx c;

    if (p == NULL || !state_check(inst, func, p, state_bytes(), inst->interface, allowed_modes))
        return NHB_ERROR;
    memset(&c, 0, sizeof c);
    c.op = SER_READ;
    c.in = p + NHB_STATE_HEADER + guid_padded();
    visit_state(inst, &c);
    return NHB_OK;
}

nhb_status nhb_state_free(nhb_instance *inst, const char *func, void **state)
{
    if (state == NULL)
        return nhb_null_argument(inst, func, "FMUState");
    if (*state == NULL)
        return NHB_OK;
    if (state_handle(inst, func, *state) == NULL)
        return NHB_ERROR;
    state_node_free(node_of(*state));
    *state = NULL;
    return NHB_OK;
}

nhb_status nhb_state_size(nhb_instance *inst, const char *func, const void *state, size_t *size)
{
    if (size == NULL)
        return nhb_null_argument(inst, func, "size");
    if (state_handle(inst, func, state) == NULL)
        return NHB_ERROR;
    *size = state_bytes();
    return NHB_OK;
}

nhb_status nhb_state_serialize(nhb_instance *inst, const char *func, const void *state, unsigned char *buffer,
                               size_t size)
{
    const size_t needed = state_bytes();
    if (state_handle(inst, func, state) == NULL)
        return NHB_ERROR;
    if (buffer == NULL)
        return nhb_null_argument(inst, func, "serializedState");
    if (size < needed) {
        nhb_log(inst, NHB_ERROR, "%s: the buffer has %lu bytes, the state needs %lu", func, (unsigned long)size,
                (unsigned long)needed);
        return NHB_ERROR;
    }
    memcpy(buffer, state, needed);
    return NHB_OK;
}

nhb_status nhb_state_deserialize(nhb_instance *inst, const char *func, const unsigned char *buffer, size_t size,
                                 void **state)
{
    unsigned char *p;

    if (state == NULL)
        return nhb_null_argument(inst, func, "FMUState");
    if (buffer == NULL)
        return nhb_null_argument(inst, func, "serializedState");
    if (!state_check(inst, func, buffer, size, -1, NHB_MODE_ANY)) /* also: size == state_bytes() */
        return NHB_ERROR;
    if ((p = state_storage(inst, func, *state)) == NULL)
        return NHB_ERROR;
    memcpy(p, buffer, size);
    *state = p;
    return NHB_OK;
}
