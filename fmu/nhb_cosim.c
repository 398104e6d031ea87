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
                   inst->rk_evals[NHB_RK_DOPRI5] / inst->rk_span[NHB_RK_DOPRI5]
               ? NHB_RK_DOP853
               : NHB_RK_DOPRI5;
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

/* One integrate() call. The integration point (t, x = inst->xi, k[0] = inst->fi) moves with the accepted
 * steps; h is the proposed size of the next step, mi its method. */
typedef struct {
    nhb_instance *inst;
    const char *func;
    double *k[NHB_RK_EXT_STAGES]; /* stage vectors, k[0] = inst->fi */
    double *xs, *xn, *e3;         /* stage state, new state, error scratch */
    double *x, *lam;              /* inst->xi; inst->lam_work, the multipliers of the stage evaluations */
    double target, t_limit;       /* the communication point; the end that no step passes */
    double t, t_start, h;         /* integration point, where this call started, proposed step size */
    int mi;                       /* method of the next step */
    const nhb_rk_method *m;       /* NHB_RK_METHODS[mi] */
    int rejected_last;            /* the latest step was rejected: no growth right after the next one */
    rk_stats *st;
    char model_msg[NHB_MSG_LEN]; /* last failure of the model at a trial point */
} rk_run;

/* One attempted step: its size and end, whether a model evaluation failed in it, its error norm. */
typedef struct {
    double h_try, t_new, err;
    int failed;
} rk_trial;

/* What an accepted step found out about events (event_in_step). */
enum {
    EVENT_FAILED = -1,
    EVENT_NONE = 0,
    EVENT_HANDLED = 1,
    EVENT_STOP = 2
};

/* The integration point at the communication point (time, x), with f from the cache (the last stage of
 * the previous doStep, or an evaluation by a getter) unless states, parameters, inputs or time were set;
 * else one evaluation. Returns NHB_OK, or NHB_ERROR after logging. */
static nhb_status start_at_communication_point(nhb_instance *inst, const char *func, rk_stats *st)
{
    const int n = NHB_NX;

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
            nhb_log(inst, NHB_ERROR, "%s: model evaluation failed at t = %.17g: %s", func, inst->t_int, inst->msg);
            inst->mode = NHB_MODE_ERROR;
            return NHB_ERROR;
        }
    }
    inst->int_valid = 1;
    return NHB_OK;
}

/* The run from the valid integration point towards target: the end no step passes (target, or with
 * overshoot stopTime when defined and >= target, else none), the stage vectors, the first method and its
 * first step size. */
static void run_start(rk_run *r, nhb_instance *inst, const char *func, double target, int overshoot, rk_stats *st)
{
    const int n = NHB_NX;
    int i;

    r->inst = inst;
    r->func = func;
    r->xs = inst->work + (size_t)(NHB_RK_EXT_STAGES - 1) * n;
    r->xn = r->xs + n;
    r->e3 = r->xn + n;
    r->x = inst->xi;
    r->lam = inst->lam_work;
    r->target = target;
    r->t_limit = target;
    if (overshoot && inst->stop_time_defined)
        r->t_limit = fmax(inst->stop_time, target);
    else if (overshoot)
        r->t_limit = HUGE_VAL;
    r->t = r->t_start = inst->t_int;
    r->rejected_last = 0;
    r->st = st;
    r->model_msg[0] = '\0';
    r->k[0] = inst->fi;
    for (i = 1; i < NHB_RK_EXT_STAGES; i++)
        r->k[i] = inst->work + (size_t)(i - 1) * n;
    r->mi = select_method(inst);
    r->m = &NHB_RK_METHODS[r->mi];
    r->h = start_method(inst, r->mi, target, r->xs, r->k[1], st);
}

/* Log "step size too small" at the integration point, naming the model's last failure; Error mode. */
static void step_too_small(rk_run *r)
{
    nhb_log(r->inst, NHB_ERROR, "%s: step size too small (h = %g) at t = %.17g%s%s", r->func, r->h, r->t,
            r->model_msg[0] ? "; the model fails near this point: " : "", r->model_msg);
    r->inst->mode = NHB_MODE_ERROR;
}

/* Step attempt: a step of the proposed size h from the integration point, ending exactly on t_limit rather
 * than past it or a sliver before it, and exactly on target if within 1 % of it (no sliver before it, no
 * dense output just past it): its stages, the new state xn and its error norm. A failing model evaluation
 * marks the step failed (rejected like a too-large error; the reason kept in model_msg). Returns 0, or 1
 * after logging when the number of steps is exhausted or the step makes no progress. */
static int attempt_step(rk_run *r, rk_trial *s)
{
    nhb_instance *inst = r->inst;
    const nhb_rk_method *m = r->m;
    const int n = NHB_NX, stages = m->stages;
    rk_stats *st = r->st;
    double *const *k = r->k;
    const double t = r->t;
    int i, j;

    s->err = 0.0;
    s->failed = 0;
    if (st->accepted[0] + st->accepted[1] + st->rejected >= NHB_MAX_STEPS) {
        nhb_log(inst, NHB_ERROR,
                "%s: maximum number of integration steps (%ld) reached at t = %.17g (h = %g) "
                "before the communication point %.17g (about %.2g more steps of this size); use shorter "
                "communication steps",
                r->func, NHB_MAX_STEPS, t, r->h, r->target, fmin((r->target - t) / r->h, DBL_MAX));
        inst->mode = NHB_MODE_ERROR;
        return 1;
    }
    if (t + 1.01 * r->h >= r->t_limit) {
        s->h_try = r->t_limit - t;
        s->t_new = r->t_limit;
    } else if (fabs(t + r->h - r->target) <= 0.01 * r->h) {
        s->h_try = r->target - t;
        s->t_new = r->target;
    } else {
        s->h_try = r->h;
        s->t_new = t + r->h;
    }
    if (!(s->t_new > t)) { /* the step is lost in the round-off of t: no progress */
        step_too_small(r);
        return 1;
    }

    for (i = 1; i < stages && !s->failed; i++) { /* stages 1..s-1 */
        nhb_rk_combine(n, i, m->a + i * (i - 1) / 2, k, r->xs);
        for (j = 0; j < n; j++)
            r->xs[j] = r->x[j] + s->h_try * r->xs[j];
        st->evals++;
        s->failed = nhb_eval_rhs(inst, t + m->c[i] * s->h_try, r->xs, k[i], r->lam);
    }
    if (!s->failed) {
        nhb_rk_combine(n, stages, m->b, k, r->xn);
        for (j = 0; j < n; j++)
            r->xn[j] = r->x[j] + s->h_try * r->xn[j];
        if (m->fsal_in_error) {
            st->evals++;
            s->failed = nhb_eval_rhs(inst, s->t_new, r->xn, k[stages], r->lam);
        }
    }
    if (!s->failed) {
        s->err = nhb_rk_error_norm(inst, m, s->h_try, k, r->x, r->xn, r->xs, r->e3);
        if (!m->fsal_in_error && s->err <= 1.0) {
            st->evals++;
            s->failed = nhb_eval_rhs(inst, s->t_new, r->xn, k[stages], r->lam);
        }
    }
    if (s->failed)
        memcpy(r->model_msg, inst->msg, sizeof r->model_msg);
    return 0;
}

/* An accepted step that passes the communication point: its dense output (DOP853: 3 evaluations).
 * Returns 0, or 1 when the model fails inside the step: then the step is done again, ending exactly on
 * target. */
static int dense_past_target(rk_run *r, const rk_trial *s)
{
    rk_stats *st = r->st;
    const long before = st->evals;

    if (nhb_rk_dense_prepare(r->inst, r->mi, r->t, s->h_try, r->x, r->xn, r->k, r->xs, &st->evals)) {
        nhb_log(r->inst, NHB_OK,
                "%s: dense output of the step %.17g -> %.17g failed (%s); ending the step at "
                "%.17g instead",
                r->func, r->t, s->t_new, r->inst->msg, r->target);
        st->dense_evals += st->evals - before;
        r->t_limit = r->target;
        r->h = r->target - r->t;
        return 1;
    }
    st->dense_evals += st->evals - before;
    return 0;
}

/* Error control of a rejected step (a failed evaluation, or err > 1 or NaN): a smaller step size. Returns
 * 0, or 1 after logging when it falls below the round-off of t (Hairer's test; relative to t and not to
 * the communication step, so that a huge step ends on the step limit with that message) or below the
 * smallest normal double near t = 0. */
static int reject_step(rk_run *r, const rk_trial *s)
{
    const nhb_rk_method *m = r->m;
    const double expo = -1.0 / (m->error_order + 1);
    const double fac = (s->failed || !isfinite(s->err)) ? m->fac_min : fmax(m->fac_min, SAFETY * pow(s->err, expo));

    r->h = s->h_try * fac;
    r->st->rejected++;
    r->rejected_last = 1;
    if (r->h < fmax(16.0 * DBL_EPSILON * fmax(fabs(r->t), fabs(r->t_start)), DBL_MIN)) {
        step_too_small(r);
        return 1;
    }
    return 0;
}

/* Error control of an accepted step: the factor of the next step size (no growth right after a
 * rejection), and the cost measurement of its method (select_method). */
static double accept_step(rk_run *r, const rk_trial *s)
{
    nhb_instance *inst = r->inst;
    const nhb_rk_method *m = r->m;
    const int mi = r->mi;
    const double expo = -1.0 / (m->error_order + 1);
    const double fac_raw = s->err > 0.0 ? SAFETY * pow(s->err, expo) : HUGE_VAL;
    double fac = fmin(m->fac_max, fmax(m->fac_min, fac_raw));

    r->st->accepted[mi]++;
    if (r->rejected_last)
        fac = fmin(fac, 1.0);
    r->rejected_last = 0;
    if (inst->rk_settled[mi]) {
        inst->rk_span[mi] += s->h_try;
        if (++inst->rk_steps[mi] >= 4 * NHB_RK_MEASURE) { /* a sliding measurement: halve the history */
            inst->rk_evals[mi] *= 0.5;
            inst->rk_span[mi] *= 0.5;
            inst->rk_steps[mi] /= 2;
        }
    } else if (fac_raw < m->fac_max || s->h_try < r->h) {
        /* the step size no longer grows at the cap (or the step was cut short to end on the communication
         * point, which then limits it): measure from now on */
        inst->rk_settled[mi] = 1;
    }
    inst->rk_age[1 - mi]++;
    return fac;
}

/* An event inside the accepted step t -> t_new: the earliest crossing located (locate_event), the
 * integration point moved there and the event handled (nhb_switch_at), unless the doStep stops at it
 * (stop_at_event: *stopped = 1). Returns EVENT_NONE (no crossing), EVENT_HANDLED (the integration goes
 * on from the event, the step size control afresh in the new modes), EVENT_STOP (the doStep ends at the
 * event) or EVENT_FAILED after logging. */
static int event_in_step(rk_run *r, const rk_trial *s, int stop_at_event, int *stopped)
{
    nhb_instance *inst = r->inst;
    const char *func = r->func;
    double tau = s->t_new;
    int element = 0, found, mode = 0, projected = 0;

    found = locate_event(inst, r->mi, r->t, s->h_try, r->x, r->xn, r->k, r->xs, r->st, &tau, &element);
    if (found > 0 && (nhb_eval_rhs(inst, tau, inst->ev_x, inst->ev_dx, inst->ev_lam) ||
                      nhb_indicators(inst, tau, inst->ev_x, inst->ev_lam, inst->ev_z)))
        found = -1;
    if (found > 0 && nhb_negative_normal(inst, tau)) {
        nhb_log(inst, NHB_ERROR, "%s: %s", func, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        return EVENT_FAILED;
    }
    if (found > 0 && nhb_mode_after(inst, tau, inst->ev_x, inst->ev_lam, element, &mode))
        found = -1;
    if (found < 0) {
        nhb_log(inst, NHB_ERROR, "%s: locating an event in the step %.17g -> %.17g failed: %s", func, r->t, s->t_new,
                inst->msg);
        inst->mode = NHB_MODE_ERROR;
        return EVENT_FAILED;
    }
    if (found == 0)
        return EVENT_NONE;
    if (mode == inst->modes[element]) { /* the mode is left but chosen again: chattering */
        nhb_chatter_message(inst, element, tau);
        nhb_log(inst, NHB_ERROR, "%s: %s", func, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        return EVENT_FAILED;
    }
    r->st->events++;
    memcpy(r->x, inst->ev_x, (size_t)NHB_NX * sizeof(double));
    r->t = tau;
    inst->t_int = tau;
    if (!stop_at_event && nhb_switch_at(inst, func, tau, r->x, &projected)) {
        nhb_log(inst, NHB_ERROR, "%s: event handling failed at t = %.17g: %s", func, tau, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        return EVENT_FAILED;
    }
    r->st->evals++;
    if (nhb_eval_rhs(inst, tau, r->x, r->k[0], inst->lam_i)) {
        nhb_log(inst, NHB_ERROR, "%s: model evaluation failed after the event at t = %.17g: %s", func, tau, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        return EVENT_FAILED;
    }
    inst->h_next[0] = inst->h_next[1] = 0.0; /* the step size control starts afresh in the new modes */
    if (stop_at_event) {
        *stopped = 1;
        return EVENT_STOP;
    }
    if (r->t >= r->target)
        return EVENT_STOP;
    r->h = start_method(inst, r->mi, r->target, r->xs, r->k[1], r->st);
    r->rejected_last = 0;
    return EVENT_HANDLED;
}

/* The integration point moves to the end of the accepted step (FSAL: fi = f(t_new, x_new)). */
static void advance(rk_run *r, const rk_trial *s)
{
    const int n = NHB_NX;

    memcpy(r->x, r->xn, (size_t)n * sizeof(double));
    memcpy(r->k[0], r->k[r->m->stages], (size_t)n * sizeof(double));
    if (NHB_NLAM > 0)
        memcpy(r->inst->lam_i, r->inst->lam_work, (size_t)NHB_NLAM * sizeof(double));
    r->t = s->t_new;
    r->inst->t_int = r->t;
}

/* Error control at the end of the doStep: the step size its method proposes for the next doStep. When
 * the last step was shortened to end on target or t_limit, its capped growth factor understates the step
 * size the controller wanted: the earlier proposal is kept unless the error estimate of the short step
 * says it is too large. */
static void propose_next_step(rk_run *r, const rk_trial *s, double fac)
{
    const double expo = -1.0 / (r->m->error_order + 1);
    double h_new = s->h_try * fac;

    if (s->h_try < r->h) {
        const double h_opt = s->err > 0.0 ? SAFETY * s->h_try * pow(s->err, expo) : HUGE_VAL;
        h_new = fmax(h_new, fmin(r->h, h_opt));
    }
    r->inst->h_next[r->mi] = h_new;
}

/* Method choice between steps (select_method): a change keeps the step size the old method proposed for
 * its return and starts the new one with its own. */
static void choose_method(rk_run *r)
{
    const int next = select_method(r->inst);

    if (next == r->mi)
        return;
    r->inst->h_next[r->mi] = r->h;
    r->mi = next;
    r->m = &NHB_RK_METHODS[next];
    r->h = start_method(r->inst, next, r->target, r->xs, r->k[1], r->st);
    r->rejected_last = 0;
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
    rk_run r;

    memset(st, 0, sizeof *st);
    *stopped = 0;
    if (!inst->int_valid && start_at_communication_point(inst, func, st) != NHB_OK)
        return NHB_ERROR;
    if (NHB_NX == 0) {
        inst->t_int = target;
        return NHB_OK;
    }
    run_start(&r, inst, func, target, overshoot, st);
    for (;;) {
        const long evals_before = st->evals;
        rk_trial s;
        double fac;
        int event;

        if (attempt_step(&r, &s))
            return NHB_ERROR;
        if (!s.failed && s.err <= 1.0 && s.t_new > target && dense_past_target(&r, &s))
            continue; /* the model fails inside the step: again, ending on target */
        if (inst->rk_settled[r.mi])
            inst->rk_evals[r.mi] += (double)(st->evals - evals_before);
        if (s.failed || !(s.err <= 1.0)) { /* also catches err = NaN */
            if (reject_step(&r, &s))
                return NHB_ERROR;
            continue;
        }
        fac = accept_step(&r, &s);
        event = nhb_indicator_count() > 0 ? event_in_step(&r, &s, stop_at_event, stopped) : EVENT_NONE;
        if (event == EVENT_FAILED)
            return NHB_ERROR;
        if (event == EVENT_STOP)
            break;
        if (event == EVENT_HANDLED)
            continue;
        advance(&r, &s);
        if (r.t >= target) {
            propose_next_step(&r, &s, fac);
            break;
        }
        r.h = s.h_try * fac;
        choose_method(&r);
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
        nhb_log(inst, NHB_ERROR,
                "%s: invalid communication point %g or step size %g (both must be finite, the "
                "step size not negative, and their sum finite)",
                func, current_time, step);
        return NHB_ERROR;
    }
    /* the importer's time and ours differ at most by accumulated round-off */
    if (fabs(current_time - inst->time) > 1e-10 * fmax(1.0, fabs(inst->time))) {
        nhb_log(inst, NHB_ERROR,
                "%s: currentCommunicationPoint %.17g does not match the time of the FMU "
                "%.17g",
                func, current_time, inst->time);
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
            nhb_log(inst, NHB_OK,
                    "%s: t = %.17g -> %.17g: from the dense output of the %s step %.17g -> "
                    "%.17g",
                    func, current_time, target, NHB_RK_METHODS[inst->dense_method].name, inst->dense_t0, inst->t_int);
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
        nhb_log(inst, NHB_OK,
                "%s: t = %.17g -> %.17g: %ld accepted (DOPRI5 %ld, DOP853 %ld) and %ld rejected "
                "steps, %ld model evaluations (%ld for dense output), integrated to %.17g, next %s h = %g; %ld "
                "events%s",
                func, current_time, target, st.accepted[0] + st.accepted[1], st.accepted[NHB_RK_DOPRI5],
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
