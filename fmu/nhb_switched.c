/* nhbridge FMU runtime, core: switched elements: modes, event indicators and the switching logic (see nhb_core.h, fmu/README.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nhb_internal.h"
#include "nhb_split.h"

/* ============================================================================================== */
/* Switched elements: modes, event indicators and the switching logic (see nhb_model.h)            */
/* ============================================================================================== */

/* Every element in the mode whose row the derived equations hold (stick, conducting); no switches yet. */
void nhb_first_modes(nhb_instance *inst)
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
    if (nhb_model_failed(inst, "nhb_switching",
                         nhb_switching(t, x, inst->p, inst->in, inst->sw_w, inst->sw_limit, inst->sw_grad, inst->msg,
                                       sizeof inst->msg)))
        return 1;
    for (k = 0; k < NHB_NSW; k++) {
        if (!isfinite(inst->sw_w[k]) || !isfinite(inst->sw_limit[k])) {
            snprintf(inst->msg, sizeof inst->msg,
                     "the switching quantities of %s are not finite at t = %.17g "
                     "(w = %g, limit = %g)",
                     NHB_SWITCH_NAMES[k], t, inst->sw_w[k], inst->sw_limit[k]);
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
int nhb_indicators(nhb_instance *inst, double t, const double *x, const double *lam, double *z)
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
int nhb_negative_normal(nhb_instance *inst, double t)
{
    int k;

    for (k = 0; k < NHB_NSW; k++) {
        if (NHB_SWITCH_KIND[k] == NHB_SW_FRICTION && inst->sw_limit[k] < 0.0) {
            snprintf(inst->msg, sizeof inst->msg,
                     "the normal force of the friction element %s turns negative at "
                     "t = %.12g (its stick limit mu_static*N = %g there); Coulomb friction needs a normal force "
                     "N >= 0 (a contact that lifts off, N < 0, is a different model)",
                     NHB_SWITCH_NAMES[k], t, inst->sw_limit[k]);
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
    failed = nhb_eval_rhs(inst, t, x, inst->ev_dx, inst->ev_lam);
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
int nhb_mode_after(nhb_instance *inst, double t, const double *x, const double *lam, int k, int *mode)
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
                            ? inst->stop_time - inst->start_time
                            : fmax(1.0, fabs(t));
    return NHB_ZENO_WINDOW * span;
}

/* How to leave chattering, as the native simulation says it. */
#define NHB_CHATTER_HINT                                                                                               \
    "give friction elements a regularization velocity (regularization = 1e-4 in the [friction] "                       \
    "entry) to use the smooth law instead of events, and diodes a positive on_resistance and "                         \
    "off_conductance"

/* The message of an element that cannot keep any mode at t: the mode its indicator leaves is the one the
 * switching rules choose again (friction that slips back into the stick test, which sends it the same way: a
 * Filippov sliding mode), so the native simulation sees a Zeno sequence of switches at one instant. */
void nhb_chatter_message(nhb_instance *inst, int k, double t)
{
    snprintf(inst->msg, sizeof inst->msg,
             "%s chatters at t = %.12g (a Zeno sequence): its indicator leaves the mode %s, "
             "and the switching rules choose %s again at once; " NHB_CHATTER_HINT,
             NHB_SWITCH_NAMES[k], t, switch_mode_name(k, inst->modes[k]), switch_mode_name(k, inst->modes[k]));
}

/* Record a switch of element k at t. Returns 0, or 1 with inst->msg when it makes more than NHB_ZENO_EVENTS
 * switches within the Zeno window (as bridge.simulation.events, whose message it follows). */
static int record_switch(nhb_instance *inst, double t, int k)
{
    const int slot = (int)(inst->events % NHB_ZENO_EVENTS);
    const double window = zeno_window(inst, t);

    if (inst->events >= NHB_ZENO_EVENTS && t - inst->zeno[slot] <= window) {
        snprintf(inst->msg, sizeof inst->msg,
                 "%s chatters: %d switches within %.3g s at t = %.12g (a Zeno "
                 "sequence); " NHB_CHATTER_HINT,
                 NHB_SWITCH_NAMES[k], NHB_ZENO_EVENTS + 1, window, t);
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
int nhb_switch_at(nhb_instance *inst, const char *func, double t, double *x, int *projected)
{
    const int nz = nhb_indicator_count();            /* the elements, then the split (NHB_REPARTITION) */
    double *z = inst->ev_z, *done = inst->ev_z + nz; /* per element: 0, 1 switched, 2 left alone */
    int iter, k, mode;

    *projected = 0;
    for (k = 0; k < nz; k++)
        done[k] = 0.0;
    for (iter = 0;; iter++) {
        if (nhb_eval_rhs(inst, t, x, inst->ev_dx, inst->ev_lam) || nhb_indicators(inst, t, x, inst->ev_lam, z) ||
            nhb_negative_normal(inst, t))
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
            snprintf(inst->msg, sizeof inst->msg,
                     "the modes of the switched elements do not settle at t = %.17g "
                     "(%d switches at this instant; %s still has indicator %g)",
                     t, iter, NHB_SWITCH_NAMES[k], z[k]);
            return 1;
        }
        if (nhb_mode_after(inst, t, x, inst->ev_lam, k, &mode))
            return 1;
        if (mode == inst->modes[k]) {
            if (z[k] < 0.0) { /* the mode is violated but the switching rules keep it: a sliding mode */
                nhb_chatter_message(inst, k, t);
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
    if (nhb_current_indicators(inst, func) != NHB_OK)
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
    if (nhb_switch_at(inst, func, inst->time, inst->x, &projected)) {
        nhb_log(inst, NHB_ERROR, "%s: event handling failed at t = %.17g: %s", func, inst->time, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        nhb_invalidate_caches(inst);
        return NHB_ERROR;
    }
    nhb_invalidate_caches(inst); /* the modes may have changed */
    *states_changed = projected;
    return NHB_OK;
}

/* Elements in a held mode (stick, an ideal diode blocking) keep w at 0 only while nothing else moves it: after
 * the importer set inputs, parameters or states (e.g. a belt speed that jumps at a communication point) the
 * velocities of x are projected onto w = 0 again (least change). Returns 0, or 1 with inst->msg. */
int nhb_hold_modes(nhb_instance *inst, double t, double *x, int *projected)
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
int nhb_initial_modes(nhb_instance *inst)
{
    double *w0 = inst->ev_z + NHB_NSW;
    int k, mode;

    nhb_first_modes(inst);
    if (NHB_NSW == 0)
        return 0;
    if (eval_switching(inst, inst->time, inst->x) || nhb_negative_normal(inst, inst->time))
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

/* The event indicators at the current point into inst->ev_z[0..NSW); on failure log, enter Error mode. */
nhb_status nhb_current_indicators(nhb_instance *inst, const char *func)
{
    if (nhb_ensure_rhs(inst, func) != NHB_OK)
        return NHB_ERROR;
    if (nhb_indicators(inst, inst->time, inst->x, inst->lam, inst->ev_z)) {
        nhb_log(inst, NHB_ERROR, "%s: model evaluation failed at t = %.17g: %s", func, inst->time, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        return NHB_ERROR;
    }
    return NHB_OK;
}
