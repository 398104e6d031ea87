/* nhbridge FMU runtime, core: Co-Simulation: the adaptive integration of doStep, events inside a step, the method choice (see nhb_core.h, fmu/README.md). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nhb_internal.h"
#include "nhb_split.h"


/* Step-size controller: h_new = h * clamp(SAFETY * err^(-1/(q+1)), fac_min, fac_max). */
#define SAFETY 0.9

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

    if (nhb_indicators(inst, t1, x1, inst->lam_work, z1))
        return -1;
    for (j = 0; j < nz; j++)
        any |= z1[j] <= 0.0;
    if (!any)
        return 0;
    if (nhb_indicators(inst, t, x0, inst->lam_i, z0))
        return -1;
    for (j = 0, any = 0; j < nz; j++) /* a crossing: negative at the end, or 0 there after positive */
        any |= z1[j] < 0.0 || (z1[j] == 0.0 && z0[j] > 0.0);
    if (!any)
        return 0;
    if (nhb_rk_dense_prepare(inst, mi, t, h, x0, x1, k, xs, &st->evals))
        return -1;
    st->dense_evals += mi == NHB_RK_DOP853 ? 3 : 0;
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
            nhb_rk_dense_eval(inst, m, inst->ev_x);
            st->evals++;
            if (nhb_eval_rhs(inst, m, inst->ev_x, inst->ev_dx, inst->ev_lam) ||
                nhb_indicators(inst, m, inst->ev_x, inst->ev_lam, zm))
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
        nhb_rk_dense_eval(inst, best, inst->ev_x);
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
    const int first = inst->rtol < 1e-9 ? NHB_RK_DOP853 : NHB_RK_DOPRI5;
    int best;

    if (inst->rk_steps[first] < NHB_RK_MEASURE)
        return first;
    if (inst->rk_steps[1 - first] < NHB_RK_MEASURE)
        return 1 - first;
    best = inst->rk_evals[NHB_RK_DOP853] / inst->rk_span[NHB_RK_DOP853] <
           inst->rk_evals[NHB_RK_DOPRI5] / inst->rk_span[NHB_RK_DOPRI5] ? NHB_RK_DOP853 : NHB_RK_DOPRI5;
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
    return nhb_rk_initial_step(inst, &NHB_RK_METHODS[mi], inst->t_int, inst->xi, inst->fi, target - inst->t_int, x1, f1,
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
    const nhb_rk_method *m;
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
            if (nhb_eval_rhs(inst, inst->t_int, inst->xi, inst->fi, inst->lam_i)) {
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
    m = &NHB_RK_METHODS[mi];
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
            nhb_rk_combine(n, i, m->a + i * (i - 1) / 2, k, xs);
            for (r = 0; r < n; r++)
                xs[r] = x[r] + h_try * xs[r];
            st->evals++;
            failed = nhb_eval_rhs(inst, t + m->c[i] * h_try, xs, k[i], lam);
        }
        if (!failed) {
            int r;
            nhb_rk_combine(n, s, m->b, k, xn);
            for (r = 0; r < n; r++)
                xn[r] = x[r] + h_try * xn[r];
            if (m->fsal_in_error) {
                st->evals++;
                failed = nhb_eval_rhs(inst, t_new, xn, k[s], lam);
            }
        }
        if (!failed) {
            err = nhb_rk_error_norm(inst, m, h_try, k, x, xn, xs, e3);
            if (!m->fsal_in_error && err <= 1.0) {
                st->evals++;
                failed = nhb_eval_rhs(inst, t_new, xn, k[s], lam);
            }
        }
        if (failed)
            memcpy(model_msg, inst->msg, sizeof model_msg);
        else if (err <= 1.0 && t_new > target) {
            /* accepted; it passes the communication point: its dense output (DOP853: 3 evaluations) */
            const long before = st->evals;
            if (nhb_rk_dense_prepare(inst, mi, t, h_try, x, xn, k, xs, &st->evals)) {
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
            if (found > 0 && (nhb_eval_rhs(inst, tau, inst->ev_x, inst->ev_dx, inst->ev_lam) ||
                              nhb_indicators(inst, tau, inst->ev_x, inst->ev_lam, inst->ev_z)))
                found = -1;
            if (found > 0 && nhb_negative_normal(inst, tau)) {
                nhb_log(inst, NHB_ERROR, "%s: %s", func, inst->msg);
                inst->mode = NHB_MODE_ERROR;
                return NHB_ERROR;
            }
            if (found > 0 && nhb_mode_after(inst, tau, inst->ev_x, inst->ev_lam, element, &mode))
                found = -1;
            if (found < 0) {
                nhb_log(inst, NHB_ERROR, "%s: locating an event in the step %.17g -> %.17g failed: %s", func, t,
                        t_new, inst->msg);
                inst->mode = NHB_MODE_ERROR;
                return NHB_ERROR;
            }
            if (found > 0 && mode == inst->modes[element]) { /* the mode is left but chosen again: chattering */
                nhb_chatter_message(inst, element, tau);
                nhb_log(inst, NHB_ERROR, "%s: %s", func, inst->msg);
                inst->mode = NHB_MODE_ERROR;
                return NHB_ERROR;
            }
            if (found > 0) {
                st->events++;
                memcpy(x, inst->ev_x, (size_t)n * sizeof(double));
                t = tau;
                inst->t_int = tau;
                if (!stop_at_event && nhb_switch_at(inst, func, tau, x, &projected)) {
                    nhb_log(inst, NHB_ERROR, "%s: event handling failed at t = %.17g: %s", func, tau, inst->msg);
                    inst->mode = NHB_MODE_ERROR;
                    return NHB_ERROR;
                }
                st->evals++;
                if (nhb_eval_rhs(inst, tau, x, k[0], inst->lam_i)) {
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
                m = &NHB_RK_METHODS[mi];
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
            nhb_invalidate_caches(inst);
        inst->time = current_time;
    }
    target = current_time + step;
    if (target == current_time) /* a zero step, or one lost in the round-off of the time: nothing to do */
        return NHB_OK;

    if (NHB_NSW > 0 && !inst->int_valid) { /* something was set: the held modes hold w at 0 again */
        int projected = 0;
        if (nhb_hold_modes(inst, inst->time, inst->x, &projected)) {
            nhb_log(inst, NHB_ERROR, "%s: model evaluation failed at t = %.17g: %s", func, inst->time, inst->msg);
            inst->mode = NHB_MODE_ERROR;
            return NHB_ERROR;
        }
        if (projected) {
            nhb_log(inst, NHB_OK, "%s: t = %.17g: velocities projected onto the held modes after a set", func,
                    inst->time);
            nhb_invalidate_caches(inst);
        }
    }
    if (inst->int_valid && target <= inst->t_int) {
        /* inside the step already computed: nothing to integrate */
        if (target < inst->t_int)
            nhb_log(inst, NHB_OK, "%s: t = %.17g -> %.17g: from the dense output of the %s step %.17g -> "
                    "%.17g", func, current_time, target, NHB_RK_METHODS[inst->dense_method].name, inst->dense_t0,
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
            nhb_invalidate_caches(inst);
            return status;
        }
        nhb_log(inst, NHB_OK, "%s: t = %.17g -> %.17g: %ld accepted (DOPRI5 %ld, DOP853 %ld) and %ld rejected "
                "steps, %ld model evaluations (%ld for dense output), integrated to %.17g, next %s h = %g; %ld "
                "events%s", func, current_time, target, st.accepted[0] + st.accepted[1], st.accepted[NHB_RK_DOPRI5],
                st.accepted[NHB_RK_DOP853], st.rejected, st.evals, st.dense_evals, inst->t_int,
                inst->rk_last >= 0 ? NHB_RK_METHODS[inst->rk_last].name : "-",
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
        nhb_rk_dense_eval(inst, target, inst->x);
        inst->rhs_valid = 0;
    }
    return NHB_OK;
}

