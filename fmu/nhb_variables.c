/* nhbridge FMU runtime, core: variable access (Get/Set Float64) (see nhb_core.h, fmu/README.md). */
#include <math.h>
#include <string.h>

#include "nhb_internal.h"
#include "nhb_split.h"

/* ============================================================================================== */
/* Variable access                                                                                */
/* ============================================================================================== */

nhb_status nhb_get_float64(nhb_instance *inst, const char *func, const unsigned int vr[], size_t n, double values[])
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
        case NHB_TIME: values[i] = inst->time; break;
        case NHB_STATE: values[i] = inst->x[var->index]; break;
        case NHB_PARAMETER: values[i] = inst->p[var->index]; break;
        case NHB_INPUT: values[i] = inst->in[var->index]; break;
        case NHB_DERIVATIVE:
        case NHB_MULTIPLIER:
            if (nhb_ensure_rhs(inst, func) != NHB_OK)
                return NHB_ERROR;
            values[i] = var->kind == NHB_DERIVATIVE ? inst->dx[var->index] : inst->lam[var->index];
            break;
        case NHB_SWITCH_MODE: values[i] = (double)inst->modes[var->index]; break;
        case NHB_INDICATOR:
            if (nhb_current_indicators(inst, func) != NHB_OK)
                return NHB_ERROR;
            values[i] = inst->ev_z[var->index];
            break;
        default: /* NHB_VELOCITY, NHB_OUTPUT, NHB_RESIDUAL (kinds are checked in nhb_init) */
            if (nhb_ensure_outputs(inst, func) != NHB_OK)
                return NHB_ERROR;
            values[i] = var->kind == NHB_VELOCITY ? inst->v[var->index]
                        : var->kind == NHB_OUTPUT ? inst->y[var->index]
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
    case NHB_INPUT: return NHB_MODE_INSTANTIATED | NHB_MODE_INIT | NHB_MODE_EVENT | NHB_MODE_CONT | NHB_MODE_STEP;
    default: /* time and computed quantities */ return 0;
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
                                             "SetContinuousStates, Model Exchange)"
                                           : "");
            return NHB_ERROR;
        }
        if (!isfinite(values[i])) {
            nhb_log(inst, NHB_ERROR, "%s: value %g for value reference %u is not finite", func, values[i], vr[i]);
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
        nhb_invalidate_caches(inst);
    return NHB_OK;
}

nhb_status nhb_no_variables_of_type(const nhb_instance *inst, const char *func, const unsigned int vr[], size_t n,
                                    const char *type_name)
{
    if (n == 0)
        return NHB_OK;
    if (vr == NULL)
        return nhb_null_argument(inst, func, "valueReferences");
    nhb_log(inst, NHB_ERROR,
            "%s: value reference %u is not a variable of type %s (this FMU has only "
            "Float64/Real variables)",
            func, vr[0], type_name);
    return NHB_ERROR;
}
