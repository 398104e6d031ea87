/* nhbridge FMU runtime: directional derivatives from the generated Jacobian (see nhb_jacobian.h).
 *
 * The generated nhb_jacobian (model.c) fills the dense matrix J of the rows [dx; lam; y] over the
 * columns [x; in] from the symbolic partial derivatives: dK/d(x, in) for the kinematics rows, and for
 * the unknowns z = [der(u); lam] of M z = F the right-hand sides dF/d(x, in) - (dM/d(x, in)) z, which
 * it solves with one LU factorization of M (nhb_lu_solve_many in nhb_linalg.c). The runtime evaluates J
 * once per point (t, x, p, in), keeps it in inst->jac, and forms J * seed for the requested rows/columns.
 */
#include <math.h>
#include <string.h>

#include "nhb_jacobian.h"
#include "nhb_split.h"

/* ---------------------------------------------------------------------------------------------- */
/* The cache: one block of doubles in inst->jac                                                   */
/*   [0] 1.0 when valid | key: t, x, p, in | dx (NX, scratch) | z (NX - NQ + NLAM) | J (rows x cols) */
/* ---------------------------------------------------------------------------------------------- */

#define JAC_ROWS (NHB_NX + NHB_NLAM + NHB_NY)
#define JAC_COLS (NHB_NX + NHB_NIN)
#define JAC_KEY  (1 + NHB_NX + NHB_NP + NHB_NIN)
#define JAC_NZ   (NHB_NX - NHB_NQ + NHB_NLAM)

static int key_matches(const nhb_instance *inst, const double *key)
{
    return memcmp(key, &inst->time, sizeof(double)) == 0 &&
           memcmp(key + 1, inst->x, (size_t)NHB_NX * sizeof(double)) == 0 &&
           memcmp(key + 1 + NHB_NX, inst->p, (size_t)NHB_NP * sizeof(double)) == 0 &&
           memcmp(key + 1 + NHB_NX + NHB_NP, inst->in, (size_t)NHB_NIN * sizeof(double)) == 0;
}

static void store_key(const nhb_instance *inst, double *key)
{
    key[0] = inst->time;
    memcpy(key + 1, inst->x, (size_t)NHB_NX * sizeof(double));
    memcpy(key + 1 + NHB_NX, inst->p, (size_t)NHB_NP * sizeof(double));
    memcpy(key + 1 + NHB_NX + NHB_NP, inst->in, (size_t)NHB_NIN * sizeof(double));
}

/* Make the cached Jacobian valid at the current point and return it in *J_out. A failed nhb_rhs
 * is logged and enters Error mode (as for every getter); a failed nhb_jacobian is logged, but the
 * instance stays usable (the state and its derivatives are fine; only the Jacobian is not).
 * Non-finite entries (a partial derivative that does not exist at this point, e.g. of an output
 * sqrt(x^2 + y^2) at x = y = 0) are kept and reported when they are used. */
static nhb_status ensure_jacobian(nhb_instance *inst, const char *func, const double **J_out)
{
    double *key, *dx, *z, *J;
    int k;

    if (!nhb_part_is_build(inst)) { /* the generated Jacobian is that of the build-time split */
        nhb_log(inst, NHB_ERROR,
                "%s: directional derivatives are available only while the split of the velocities "
                "is the one of build time; it was re-partitioned at an event",
                func);
        return NHB_ERROR;
    }
    if (inst->jac == NULL) {
        size_t n = 1 + (size_t)JAC_KEY + (size_t)NHB_NX + (size_t)JAC_NZ + (size_t)JAC_ROWS * (size_t)JAC_COLS;
        inst->jac = (double *)inst->alloc_mem(n, sizeof(double));
        if (inst->jac == NULL) {
            nhb_log(inst, NHB_ERROR, "%s: out of memory for the Jacobian", func);
            return NHB_ERROR;
        }
    }
    key = inst->jac + 1;
    dx = key + JAC_KEY;
    z = dx + NHB_NX;
    J = z + JAC_NZ;
    *J_out = J;
    if (inst->jac[0] == 1.0 && key_matches(inst, key))
        return NHB_OK;
    inst->jac[0] = 0.0;

    /* z = [der(u); lam] at this point: the cached (or a new) nhb_rhs evaluation */
    if (nhb_get_derivatives(inst, func, dx, (size_t)NHB_NX) != NHB_OK)
        return NHB_ERROR; /* logged, Error mode */
    for (k = 0; k < NHB_NX - NHB_NQ; k++)
        z[k] = dx[NHB_NQ + k];
    for (k = 0; k < NHB_NLAM; k++)
        z[NHB_NX - NHB_NQ + k] = inst->lam[k];

    inst->msg[0] = '\0';
    if (nhb_model_failed(inst, "nhb_jacobian",
                         nhb_jacobian(inst->time, inst->x, inst->p, inst->in, z, J, inst->msg, sizeof inst->msg))) {
        nhb_log(inst, NHB_ERROR, "%s: Jacobian evaluation failed at t = %.17g: %s", func, inst->time, inst->msg);
        return NHB_ERROR;
    }
    store_key(inst, key);
    inst->jac[0] = 1.0;
    return NHB_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Value references                                                                               */
/* ---------------------------------------------------------------------------------------------- */

#define ROW_INVALID (-1)
/* a STATE as unknown: row -2 - index of the identity (its value is x[index]) */
#define ROW_STATE(index) (-2 - (index))

/* Row of J for an unknown (ROW_STATE for a state, ROW_INVALID if not an unknown). */
static int unknown_row(const nhb_variable *var)
{
    switch (var->kind) {
    case NHB_DERIVATIVE: return var->index; /* dx[index] */
    case NHB_VELOCITY: return var->index;   /* v[i] = K_i = dx[i], i < NQ */
    case NHB_MULTIPLIER: return NHB_NX + var->index;
    case NHB_OUTPUT: return NHB_NX + NHB_NLAM + var->index;
    case NHB_STATE: return ROW_STATE(var->index);
    default: return ROW_INVALID;
    }
}

/* Column of J for a known (-1 if not a known). */
static int known_column(const nhb_variable *var)
{
    switch (var->kind) {
    case NHB_STATE: return var->index;
    case NHB_INPUT: return NHB_NX + var->index;
    default: return -1;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Directional derivative                                                                         */
/* ---------------------------------------------------------------------------------------------- */

nhb_status nhb_directional_derivative(nhb_instance *inst, const char *func, const unsigned int unknowns[],
                                      size_t n_unknowns, const unsigned int knowns[], size_t n_knowns,
                                      const double seed[], double sensitivity[])
{
    const double *J = NULL;
    size_t i, j;

    if (!NHB_HAS_JACOBIAN) {
        nhb_log(inst, NHB_ERROR,
                "%s: not supported (this FMU was exported without the Jacobian code: "
                "providesDirectionalDerivative(s) = false)",
                func);
        return NHB_ERROR;
    }
    if (n_unknowns == 0)
        return NHB_OK;
    if (unknowns == NULL)
        return nhb_null_argument(inst, func, "unknowns");
    if (sensitivity == NULL)
        return nhb_null_argument(inst, func, "sensitivity");
    if (n_knowns > 0 && knowns == NULL)
        return nhb_null_argument(inst, func, "knowns");
    if (n_knowns > 0 && seed == NULL)
        return nhb_null_argument(inst, func, "seed");

    /* check every reference first: a wrong call changes nothing */
    for (i = 0; i < n_unknowns; i++) {
        const nhb_variable *var = nhb_find_variable(inst, func, unknowns[i], " in unknowns");
        if (var == NULL)
            return NHB_ERROR;
        if (unknown_row(var) == ROW_INVALID) {
            nhb_log(inst, NHB_ERROR,
                    "%s: value reference %u (%s) cannot be an unknown (state derivatives, "
                    "outputs, multipliers and states can)",
                    func, unknowns[i], nhb_kind_name(var->kind));
            return NHB_ERROR;
        }
    }
    for (j = 0; j < n_knowns; j++) {
        const nhb_variable *var = nhb_find_variable(inst, func, knowns[j], " in knowns");
        if (var == NULL)
            return NHB_ERROR;
        if (known_column(var) < 0) {
            nhb_log(inst, NHB_ERROR, "%s: value reference %u (%s) cannot be a known (states and inputs can)", func,
                    knowns[j], nhb_kind_name(var->kind));
            return NHB_ERROR;
        }
        if (!isfinite(seed[j])) {
            nhb_log(inst, NHB_ERROR, "%s: seed %g for value reference %u is not finite", func, seed[j], knowns[j]);
            return NHB_ERROR;
        }
    }

    for (i = 0; i < n_unknowns; i++) {
        int row = unknown_row(nhb_find_variable(inst, func, unknowns[i], ""));
        double s = 0.0;
        if (row >= 0 && J == NULL && ensure_jacobian(inst, func, &J) != NHB_OK)
            return NHB_ERROR;
        for (j = 0; j < n_knowns; j++) {
            int col = known_column(nhb_find_variable(inst, func, knowns[j], ""));
            if (seed[j] == 0.0) /* also when the partial derivative does not exist */
                continue;
            if (row < 0) {
                if (col == -2 - row) /* a state as unknown: d x[k] / d x[k] = 1 */
                    s += seed[j];
                continue;
            }
            if (!isfinite(J[row * JAC_COLS + col])) {
                nhb_log(inst, NHB_ERROR,
                        "%s: the partial derivative of value reference %u with respect to value "
                        "reference %u is not finite at t = %.17g (%g; the expression is not differentiable here)",
                        func, unknowns[i], knowns[j], inst->time, J[row * JAC_COLS + col]);
                return NHB_ERROR;
            }
            s += J[row * JAC_COLS + col] * seed[j];
        }
        sensitivity[i] = s;
    }
    return NHB_OK;
}
