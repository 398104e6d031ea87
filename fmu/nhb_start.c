/* nhbridge FMU runtime, core: experiment set-up and consistent start values (see nhb_core.h, fmu/README.md). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nhb_internal.h"

/* ============================================================================================== */
/* Experiment set-up and initialization                                                           */
/* ============================================================================================== */

nhb_status nhb_setup_experiment(nhb_instance *inst, const char *func, int tolerance_defined, double tolerance,
                                double start_time, int stop_time_defined, double stop_time)
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
        nhb_log(inst, NHB_ERROR,
                "%s: tolerance %g is out of range: a relative tolerance must be positive and "
                "below %g (typical values 1e-4 .. 1e-10)",
                func, tolerance, NHB_MAX_RTOL);
        return NHB_ERROR;
    }

    inst->rtol = tolerance_defined ? tolerance : NHB_DEFAULT_RTOL;
    if (inst->rtol < min_rtol) {
        nhb_log(inst, NHB_WARNING, "%s: tolerance %g is below %g; using %g", func, inst->rtol, min_rtol, min_rtol);
        inst->rtol = min_rtol;
    }
    inst->atol = inst->rtol * NHB_ATOL_FACTOR;
    inst->start_time = start_time;
    inst->stop_time_defined = stop_time_defined != 0;
    inst->stop_time = stop_time_defined ? stop_time : 0.0;
    inst->time = start_time;
    nhb_invalidate_caches(inst);
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
#define NHB_NEWTON_MAX      50                  /* Newton iterations (as the loader) */
#define NHB_NEWTON_TOL      1e-14               /* relative to max(1, max |q|) (as the loader) */
#define NHB_NEWTON_FLOOR    (4.0 * DBL_EPSILON) /* also converged: steps below this relative to max(1, max |q|) */
#define NHB_NEWTON_ROUNDOFF 1e-10               /* ... with |phi_k| below this relative to max(1, max |q|) */
#define NHB_START_CHECK     1e-8 /* afterwards |A v + a0|_k <= NHB_START_CHECK max(1, sum |A_ki v_i| + |a0_k|) */

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
int nhb_split_crossed(nhb_instance *inst, double t, const double *x)
{
    const int m = NHB_NRES, n = NHB_NQ;
    double *block, *A, *D;
    int sign = 1, i, j, k, p;
    char dep[256];

    if (NHB_VELOCITY_STATES || NHB_REPARTITION || !NHB_HAS_CONSTRAINTS || m == 0)
        return 0;
    block = nhb_alloc_doubles(inst, nhb_alloc_count(NHB_NHOL) + (size_t)(m * n + m + m * m));
    if (block == NULL) {
        snprintf(inst->msg, sizeof inst->msg, "out of memory");
        return 1;
    }
    A = block + nhb_alloc_count(NHB_NHOL);
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
    snprintf(inst->msg, sizeof inst->msg,
             "the split of the velocities chosen at build time (dependent %s) is "
             "singular at t = %.17g or was passed just before it (det(A_dep) changed its sign since the start): "
             "this FMU of a reduced method cannot re-partition; export the lagrange form or choose other "
             "independent coordinates",
             coordinate_list(dep, sizeof dep, 1), t);
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
    if (nhb_model_failed(
            inst, "nhb_constraints",
            nhb_constraints(inst->time, q, inst->p, inst->in, w->phi, w->A, w->a0, inst->msg, sizeof inst->msg)))
        return 1;
    if ((i = nhb_first_non_finite(w->phi, NHB_NHOL)) >= 0)
        k = i;
    else if ((i = nhb_first_non_finite(w->A, m * n)) >= 0)
        k = i / n;
    else if ((i = nhb_first_non_finite(w->a0, m)) >= 0)
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
            nhb_log(inst, NHB_ERROR,
                    "%s: the start positions cannot be made consistent with the holonomic "
                    "constraints at t = %.17g: %s",
                    func, inst->time, inst->msg);
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
            nhb_log(inst, NHB_ERROR,
                    "%s: the start values violate constraint %s (residual %.6g) and cannot be "
                    "made consistent: Newton on the dependent positions (%s) did not converge in %d iterations "
                    "(residual of %s: %.6g); the positions of %s count as given: change them or the parameters "
                    "so that the constraints have a solution nearby",
                    func, NHB_CONSTRAINT_NAMES[worst0], given, coordinate_list(dep, sizeof dep, 1), NHB_NEWTON_MAX,
                    NHB_CONSTRAINT_NAMES[worst], w->phi[worst], coordinate_list(ind, sizeof ind, 0));
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
            nhb_log(inst, NHB_ERROR,
                    "%s: the start values violate constraint %s (residual %.6g) and cannot be "
                    "made consistent: the holonomic constraints cannot be solved for the dependent positions (%s), "
                    "their Jacobian is singular (pivot %d) at Newton iteration %d; the positions of %s count as "
                    "given: change them or the parameters",
                    func, NHB_CONSTRAINT_NAMES[worst0], given, coordinate_list(dep, sizeof dep, 1), bad, it,
                    coordinate_list(ind, sizeof ind, 0));
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
        nhb_log(inst, NHB_ERROR,
                "%s: the start values violate constraint %s (residual %.6g) and cannot be made "
                "consistent: at the start positions the constraints cannot be solved for the dependent "
                "velocities (%s), their matrix is singular (pivot %d); the velocities of %s count as given: "
                "change the start positions or the parameters",
                func, NHB_CONSTRAINT_NAMES[worst], w->M[worst], coordinate_list(dep, sizeof dep, 1), bad,
                coordinate_list(ind, sizeof ind, 0));
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
            nhb_log(inst, NHB_ERROR,
                    "%s: the start velocities cannot be made consistent with constraint %s: "
                    "residual %.6g after solving for the dependent velocities (%s), the constraints are too "
                    "ill-conditioned in them at the start positions; change the start positions or the "
                    "parameters",
                    func, NHB_CONSTRAINT_NAMES[k], w->M[k], coordinate_list(dep, sizeof dep, 1));
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
    count = nhb_alloc_count(NHB_NHOL) + (size_t)(m * n + m + m * m + m + NHB_NX);
    block = nhb_alloc_doubles(inst, count);
    if (block == NULL) {
        nhb_log(inst, NHB_ERROR, "%s: out of memory", func);
        inst->mode = NHB_MODE_ERROR;
        return NHB_ERROR;
    }
    w.phi = block;
    w.A = w.phi + nhb_alloc_count(NHB_NHOL);
    w.a0 = w.A + m * n;
    w.M = w.a0 + m;
    w.b = w.M + m * m;
    w.x0 = w.b + m;
    memcpy(w.x0, inst->x, (size_t)NHB_NX * sizeof(double));

    if (NHB_NHOL > 0)
        failed = project_positions(inst, func, &w);
    else if (eval_constraints(inst, inst->x, &w)) {
        nhb_log(inst, NHB_ERROR,
                "%s: the start velocities cannot be made consistent with the constraints at "
                "t = %.17g: %s",
                func, inst->time, inst->msg);
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
        nhb_log(inst, NHB_OK,
                "%s: start state made consistent with the constraints: dependent coordinates %s "
                "computed from the others (largest change of a state %.6g)",
                func, coordinate_list(dep, sizeof dep, 1), change);
    }
    inst->free_mem(block);
    nhb_invalidate_caches(inst);
    return failed ? NHB_ERROR : NHB_OK;
}

nhb_status nhb_check_initial_point(nhb_instance *inst, const char *func)
{
    if (make_start_consistent(inst, func) != NHB_OK)
        return NHB_ERROR;
    if (nhb_initial_modes(inst)) {
        nhb_log(inst, NHB_ERROR,
                "%s: the initial modes of the switched elements cannot be determined at t = %.17g: "
                "%s",
                func, inst->time, inst->msg);
        inst->mode = NHB_MODE_ERROR;
        nhb_invalidate_caches(inst);
        return NHB_ERROR;
    }
    nhb_invalidate_caches(inst);
    inst->split_sign = 0; /* taken at the consistent start state */
    if (nhb_ensure_rhs(inst, func) != NHB_OK)
        return NHB_ERROR;
    return nhb_ensure_outputs(inst, func);
}
