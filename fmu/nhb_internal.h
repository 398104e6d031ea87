/* nhbridge FMU runtime: what the files of the core share among themselves (see fmu/README.md).
 *
 * nhb_core.h is the interface of the core to the FMI layers; this header declares the helpers that
 * one file of the core defines and others call. It is not for the FMI layers or generated code.
 */
#ifndef NHB_INTERNAL_H
#define NHB_INTERNAL_H

#include <float.h>
#include <stddef.h>

#include "nhb_core.h"

/* Range of the relative tolerance of the Co-Simulation integrator: below NHB_MIN_RTOL the error
 * estimates drown in round-off (raised to it with a warning); at NHB_MAX_RTOL (100 % relative error)
 * and above the error control accepts any step, so the result means nothing (rejected). */
#define NHB_MIN_RTOL (100.0 * DBL_EPSILON)
#define NHB_MAX_RTOL 1.0

/* nhb_instance.c: allocation, caches, model evaluation ------------------------------------------ */

/* Number of elements to allocate for an array of n entries (never 0, so no pointer is NULL). */
size_t nhb_alloc_count(int n);
double *nhb_alloc_doubles(const nhb_instance *inst, size_t n);

/* A set of states, parameters, inputs or time: the cached evaluations are stale, and the integration
 * point (which may lie past the communication point) no longer continues the trajectory. */
void nhb_invalidate_caches(nhb_instance *inst);

/* Index of the first non-finite entry of a[0..n), or -1. */
int nhb_first_non_finite(const double *a, int n);

/* " (<name>, value reference <vr>)" of the variable of the given kind and index, for messages. */
const char *nhb_vr_note(char *buf, size_t len, int kind, int index);

/* nhb_rhs() at (t, x) with the instance's parameters and inputs, checked finite. Returns 0, or 1 with
 * the reason in inst->msg. */
int nhb_eval_rhs(nhb_instance *inst, double t, const double *x, double *dx, double *lam);

/* Make the cached nhb_rhs() / nhb_outputs() results valid at the current point; on failure log, enter
 * Error mode. */
nhb_status nhb_ensure_rhs(nhb_instance *inst, const char *func);
nhb_status nhb_ensure_outputs(nhb_instance *inst, const char *func);

/* nhb_switched.c: switched elements ----------------------------------------------------------------- */

void nhb_first_modes(nhb_instance *inst);
int nhb_indicators(nhb_instance *inst, double t, const double *x, const double *lam, double *z);
int nhb_negative_normal(nhb_instance *inst, double t);
int nhb_mode_after(nhb_instance *inst, double t, const double *x, const double *lam, int k, int *mode);
void nhb_chatter_message(nhb_instance *inst, int k, double t);
int nhb_switch_at(nhb_instance *inst, const char *func, double t, double *x, int *projected);
int nhb_hold_modes(nhb_instance *inst, double t, double *x, int *projected);
int nhb_initial_modes(nhb_instance *inst);
nhb_status nhb_current_indicators(nhb_instance *inst, const char *func);

/* nhb_start.c: consistent start values ------------------------------------------------------------- */

/* Reduced forms: 1 with inst->msg when det(A_dep) of the build-time split changed its sign since the
 * first evaluation after initialization, else 0. */
int nhb_split_crossed(nhb_instance *inst, double t, const double *x);

/* nhb_rk.c: the Runge-Kutta pairs and their dense output ------------------------------------------ */

/* An embedded explicit Runge-Kutta pair, as in the codes DOPRI5 and DOP853 of Hairer, Norsett &
 * Wanner, Solving Ordinary Differential Equations I (2nd ed., II.4-II.5, II.10). A step of size h
 * from (t, x) evaluates the stages k[0..s) (k[0] = f(t, x)), forms the new state
 * x_new = x + h sum_j b_j k_j and evaluates k[s] = f(t + h, x_new), which is k[0] of the next
 * step (FSAL: "first same as last"). */
typedef struct {
    const char *name;
    int stages;              /* s */
    int error_order;         /* q: the error estimate is O(h^(q+1)); the controller uses err^(-1/(q+1)) */
    int fsal_in_error;       /* 1: the error estimate needs k[s] (DOPRI5), 0: k[s] only after acceptance */
    const double *c;         /* nodes c[0..s) */
    const double *a;         /* a[i][j], j < i, packed by rows: a[i * (i - 1) / 2 + j] */
    const double *b;         /* weights of x_new, b[0..s) */
    const double *e;         /* error weights e[0..s] (the last one multiplies k[s]) */
    const double *e3;        /* DOP853: weights of the 3rd-order error estimate, else NULL */
    double fac_min, fac_max; /* limits of the step-size change factor */
} nhb_rk_method;

enum {
    NHB_RK_DOPRI5 = 0,
    NHB_RK_DOP853 = 1
};

extern const nhb_rk_method NHB_RK_METHODS[2];

void nhb_rk_combine(int n, int count, const double *w, double *const *k, double *out);
double nhb_rk_error_norm(const nhb_instance *inst, const nhb_rk_method *m, double h, double *const *k, const double *x,
                         const double *xn, double *e5, double *e3);
double nhb_rk_initial_step(nhb_instance *inst, const nhb_rk_method *m, double t, const double *x0, const double *f0,
                           double span, double *x1, double *f1, long *n_evals);
int nhb_rk_dense_prepare(nhb_instance *inst, int mi, double t, double h, const double *x0, const double *x1,
                         double *const *k, double *xs, long *n_evals);
void nhb_rk_dense_eval(const nhb_instance *inst, double t, double *x);

/* nhb_state.c: FMU states ------------------------------------------------------------------------- */

/* Free every state still in the instance's list (FreeInstance). */
void nhb_state_free_all(nhb_instance *inst);

#endif
