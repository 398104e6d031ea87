/* nhbridge FMU runtime, core: Model Exchange: time, continuous states, derivatives, event indicators (see nhb_core.h, fmu/README.md). */
#include <math.h>
#include <string.h>

#include "nhb_internal.h"
#include "nhb_split.h"

/* ============================================================================================== */
/* Model Exchange                                                                                 */
/* ============================================================================================== */

/* Check an array argument of the continuous-state functions: the count and the pointer. */
static nhb_status check_state_array(const nhb_instance *inst, const char *func, const void *a, size_t n, int expected,
                                    const char *what)
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
    nhb_invalidate_caches(inst);
    return NHB_OK;
}

nhb_status nhb_set_states(nhb_instance *inst, const char *func, const double x[], size_t nx)
{
    int i;

    if (check_state_array(inst, func, x, nx, NHB_NX, "continuous states") != NHB_OK)
        return NHB_ERROR;
    if ((i = nhb_first_non_finite(x, NHB_NX)) >= 0) {
        char note[160];
        nhb_log(inst, NHB_ERROR,
                "%s: state x[%d]%s = %g is not finite (at t = %.17g; the instance keeps its "
                "states)",
                func, i, nhb_vr_note(note, sizeof note, NHB_STATE, i), x[i], inst->time);
        return NHB_ERROR;
    }
    if (NHB_NX > 0)
        memcpy(inst->x, x, (size_t)NHB_NX * sizeof(double));
    nhb_invalidate_caches(inst);
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
    if (nhb_ensure_rhs(inst, func) != NHB_OK)
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
    if (nhb_current_indicators(inst, func) != NHB_OK)
        return NHB_ERROR;
    memcpy(z, inst->ev_z, (size_t)nhb_indicator_count() * sizeof(double));
    return NHB_OK;
}
