/* nhbridge FMU runtime, core: instance data, logging, the state machine, life cycle and model evaluation (see nhb_core.h, fmu/README.md). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nhb_internal.h"
#include "nhb_split.h"

/* ============================================================================================== */
/* Small helpers                                                                                  */
/* ============================================================================================== */

/* Number of elements to allocate for an array of n entries (never 0, so no pointer is NULL). */
size_t nhb_alloc_count(int n)
{
    return n > 0 ? (size_t)n : 1u;
}

double *nhb_alloc_doubles(const nhb_instance *inst, size_t n)
{
    return (double *)inst->alloc_mem(n, sizeof(double));
}

/* A set of states, parameters, inputs or time: the cached evaluations are stale, and the integration
 * point (which may lie past the communication point) no longer continues the trajectory. */
void nhb_invalidate_caches(nhb_instance *inst)
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

const nhb_variable *nhb_find_variable(const nhb_instance *inst, const char *func, unsigned int vr, const char *where)
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
            nhb_log(inst, NHB_ERROR,
                    "%s: unknown log category \"%s\" (known: logStatusError, "
                    "logStatusWarning, logDebug)",
                    func, categories[i] ? categories[i] : "(null)");
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
            nhb_log(inst, NHB_ERROR,
                    "model.c: negative array size (entry %d of NX, NQ, NP, NIN, NV, "
                    "NY, NLAM, NRES, NVARS, NSW)",
                    i);
            return 0;
        }
    }
    if (NHB_NSW > 0 && !NHB_VELOCITY_STATES) {
        nhb_log(inst, NHB_ERROR,
                "model.c: switched elements need all velocities as states "
                "(NHB_VELOCITY_STATES = 1)");
        return 0;
    }
    for (i = 0; i < NHB_NSW; i++) {
        if (NHB_SWITCH_KIND[i] < NHB_SW_FRICTION || NHB_SWITCH_KIND[i] > NHB_SW_IDEAL_DIODE ||
            NHB_SWITCH_UNKNOWN[i] < 0 || NHB_SWITCH_UNKNOWN[i] >= NHB_NLAM) {
            nhb_log(inst, NHB_ERROR,
                    "model.c: switched element %d has kind %d and unknown lam[%d] (kinds 0..2, "
                    "unknowns 0..%d)",
                    i, NHB_SWITCH_KIND[i], NHB_SWITCH_UNKNOWN[i], NHB_NLAM - 1);
            return 0;
        }
    }
    for (i = 0; i < NHB_NVARS; i++) {
        const nhb_variable *var = &NHB_VARIABLES[i];
        int count = kind_count(var->kind);
        if (i > 0 && NHB_VARIABLES[i - 1].vr >= var->vr) {
            nhb_log(inst, NHB_ERROR,
                    "model.c: NHB_VARIABLES is not sorted by strictly increasing value "
                    "reference (entry %d, vr %u)",
                    i, var->vr);
            return 0;
        }
        if (count < 0) {
            nhb_log(inst, NHB_ERROR, "model.c: NHB_VARIABLES entry %d (vr %u) has invalid kind %d", i, var->vr,
                    var->kind);
            return 0;
        }
        if (var->index < 0 || var->index >= count) {
            nhb_log(inst, NHB_ERROR,
                    "model.c: NHB_VARIABLES entry %d (vr %u, %s) has index %d outside "
                    "0..%d",
                    i, var->vr, nhb_kind_name(var->kind), var->index, count - 1);
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

    inst->x = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NX));
    inst->p = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NP));
    inst->in = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NIN));
    inst->dx = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NX));
    inst->lam = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NLAM));
    inst->v = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NV));
    inst->y = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NY));
    inst->r = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NRES));
    inst->work = nhb_alloc_doubles(inst, NHB_WORK_VECTORS * nhb_alloc_count(NHB_NX));
    inst->lam_work = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NLAM));
    inst->xi = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NX));
    inst->fi = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NX));
    inst->lam_i = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NLAM));
    inst->dense = nhb_alloc_doubles(inst, NHB_DENSE_VECTORS * nhb_alloc_count(NHB_NX));
    inst->modes = (int *)alloc_mem(nhb_alloc_count(NHB_NSW), sizeof(int));
    inst->sw_w = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NSW));
    inst->sw_limit = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NSW));
    inst->sw_grad = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NSW * NHB_NQ));
    inst->ev_x = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NX));
    inst->ev_dx = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NX));
    inst->ev_lam = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NLAM));
    inst->ev_z = nhb_alloc_doubles(inst, 4u * nhb_alloc_count(nhb_indicator_count()));
    inst->zeno = nhb_alloc_doubles(inst, NHB_ZENO_EVENTS);
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

void nhb_release(nhb_instance *inst)
{
    double **arrays[] = {&inst->x,     &inst->p,     &inst->in,     &inst->dx,       &inst->lam,      &inst->v,
                         &inst->y,     &inst->r,     &inst->work,   &inst->lam_work, &inst->xi,       &inst->fi,
                         &inst->lam_i, &inst->dense, &inst->jac,    &inst->sw_w,     &inst->sw_limit, &inst->sw_grad,
                         &inst->ev_x,  &inst->ev_dx, &inst->ev_lam, &inst->ev_z,     &inst->zeno};
    size_t i;

    if (inst->free_mem == NULL)
        return;
    nhb_state_free_all(inst);
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
    nhb_part_reset(inst);  /* the split of build time */
    nhb_first_modes(inst); /* until initialization */
    inst->mode = NHB_MODE_INSTANTIATED;
    nhb_invalidate_caches(inst);
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
int nhb_first_non_finite(const double *a, int n)
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
const char *nhb_vr_note(char *buf, size_t len, int kind, int index)
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

/* nhb_rhs() at (t, x) with the instance's parameters and inputs, plus a finiteness check of the
 * state it gets and of the results. Returns 0, or 1 with the reason in inst->msg. */
int nhb_eval_rhs(nhb_instance *inst, double t, const double *x, double *dx, double *lam)
{
    char note[160];
    int i;

    inst->msg[0] = '\0';
    if ((i = nhb_first_non_finite(x, NHB_NX)) >= 0) {
        snprintf(inst->msg, sizeof inst->msg, "non-finite state x[%d]%s = %g", i,
                 nhb_vr_note(note, sizeof note, NHB_STATE, i), x[i]);
        return 1;
    }
    if (NHB_REPARTITION) { /* reduced forms that re-partition: the current split (nhb_split.c) */
        if (nhb_part_rhs(inst, t, x, dx))
            return 1;
    } else if (nhb_model_failed(inst, "nhb_rhs",
                                nhb_rhs(t, x, inst->p, inst->in, inst->modes, dx, lam, inst->msg, sizeof inst->msg)))
        return 1;
    if (nhb_split_crossed(inst, t, x))
        return 1;
    if ((i = nhb_first_non_finite(dx, NHB_NX)) >= 0) {
        snprintf(inst->msg, sizeof inst->msg, "non-finite state derivative dx[%d]%s = %g", i,
                 nhb_vr_note(note, sizeof note, NHB_DERIVATIVE, i), dx[i]);
        return 1;
    }
    if ((i = nhb_first_non_finite(lam, NHB_NLAM)) >= 0) {
        snprintf(inst->msg, sizeof inst->msg, "non-finite multiplier lambda[%d]%s = %g", i,
                 nhb_vr_note(note, sizeof note, NHB_MULTIPLIER, i), lam[i]);
        return 1;
    }
    return 0;
}

/* Make inst->dx and inst->lam valid at the current point; on failure log, enter Error mode. */
nhb_status nhb_ensure_rhs(nhb_instance *inst, const char *func)
{
    if (inst->rhs_valid)
        return NHB_OK;
    if (nhb_eval_rhs(inst, inst->time, inst->x, inst->dx, inst->lam)) {
        nhb_log(inst, NHB_ERROR, "%s: model evaluation failed at t = %.17g: %s", func, inst->time, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        return NHB_ERROR;
    }
    inst->rhs_valid = 1;
    return NHB_OK;
}

/* Make inst->v, inst->y and inst->r valid at the current point; on failure log, enter Error mode. */
nhb_status nhb_ensure_outputs(nhb_instance *inst, const char *func)
{
    int failed, i = -1, kind = NHB_VELOCITY;
    const char *what = "";
    const double *a = inst->v;
    char note[160];

    if (inst->out_valid)
        return NHB_OK;
    if (NHB_OUTPUTS_USE_LAM && nhb_ensure_rhs(inst, func) != NHB_OK) /* outputs that contain efforts */
        return NHB_ERROR;
    inst->msg[0] = '\0';
    if (NHB_REPARTITION)
        failed = nhb_part_outputs(inst, inst->time, inst->x, inst->v, inst->y, inst->r);
    else
        failed =
            nhb_model_failed(inst, "nhb_outputs",
                             nhb_outputs(inst->time, inst->x, inst->p, inst->in, NHB_OUTPUTS_USE_LAM ? inst->lam : NULL,
                                         inst->v, inst->y, inst->r, inst->msg, sizeof inst->msg));
    if (!failed) {
        if ((i = nhb_first_non_finite(inst->v, NHB_NV)) >= 0)
            what = "velocity v";
        else if ((i = nhb_first_non_finite(inst->y, NHB_NY)) >= 0)
            what = "output y", a = inst->y, kind = NHB_OUTPUT;
        else if ((i = nhb_first_non_finite(inst->r, NHB_NRES)) >= 0)
            what = "constraint residual r", a = inst->r, kind = NHB_RESIDUAL;
        if (i >= 0) {
            snprintf(inst->msg, sizeof inst->msg, "non-finite %s[%d]%s = %g", what, i,
                     nhb_vr_note(note, sizeof note, kind, i), a[i]);
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
