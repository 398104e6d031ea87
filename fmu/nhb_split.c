/* nhbridge FMU runtime: re-partitioning of the velocities for the reduced methods (see nhb_split.h).
 *
 * With n = NHB_NQ coordinates, m = NHB_NRES constraints A(q, t) q' + a0(q, t) = 0 and p = n - m slots u:
 *   1. A_dep [B, beta] = -[A_ind, a0]               the dependent velocities v_dep = B u + beta (LU, pivoting);
 *   2. A_dep a_dep = -(A' v + a0')                  q'' = C u' + a, C = [I; B] (rows of ind; dep), a_ind = 0;
 *   3. (C^T M C) u' = C^T (h - M a)                 M q'' = h: the generated split-free equations.
 * Health: sigma_min(A_dep) / sigma_max(A) from one-sided Jacobi singular values (accurate for small values).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nhb_split.h"

#define NQ NHB_NQ
#define NM NHB_NRES
#define NS (NHB_NX - NHB_NQ)

int nhb_indicator_count(void)
{
    return NHB_NSW + (NHB_REPARTITION ? 1 : 0);
}

/* the workspace: pointers into inst->split_work */
typedef struct {
    double *A, *a0, *D, *R, *v, *M, *h, *Ad, *a0d, *C, *acc, *Mr, *Fr, *MC, *S, *sv, *b;
    int *piv, *piv2, *dep, *ind;
} part_work;

static size_t work_doubles(void)
{
    const size_t n = (size_t)NQ, m = (size_t)NM, p = (size_t)NS;
    return m * n + m + m * m + m * (p + 1) + n + n * n + n + m * n + m + n * p + n + p * p + p + n * p + n * n + n + n +
           8;
}

static part_work layout_work(const nhb_instance *inst)
{
    const int n = NQ, m = NM, p = NS;
    part_work w;
    double *d = inst->split_work;
    int *k = inst->split_ints;

    w.A = d, d += m * n;
    w.a0 = d, d += m;
    w.D = d, d += m * m;
    w.R = d, d += m * (p + 1);
    w.v = d, d += n;
    w.M = d, d += n * n;
    w.h = d, d += n;
    w.Ad = d, d += m * n;
    w.a0d = d, d += m;
    w.C = d, d += n * p;
    w.acc = d, d += n;
    w.Mr = d, d += p * p;
    w.Fr = d, d += p;
    w.MC = d, d += n * p;
    w.S = d, d += n * n;
    w.sv = d, d += n;
    w.b = d;
    w.piv = k, k += n;
    w.piv2 = k, k += n;
    w.dep = k, k += n;
    w.ind = k;
    return w;
}

int nhb_part_init(nhb_instance *inst)
{
    inst->split_dep = NULL;
    inst->split_work = NULL;
    inst->split_ints = NULL;
    if (!NHB_REPARTITION)
        return 0;
    inst->split_dep = (int *)inst->alloc_mem((size_t)NQ, sizeof(int));
    inst->split_ints = (int *)inst->alloc_mem(4u * (size_t)NQ, sizeof(int));
    inst->split_work = (double *)inst->alloc_mem(work_doubles(), sizeof(double));
    return inst->split_dep == NULL || inst->split_ints == NULL || inst->split_work == NULL;
}

void nhb_part_release(nhb_instance *inst)
{
    if (inst->free_mem == NULL)
        return;
    if (inst->split_dep != NULL)
        inst->free_mem(inst->split_dep);
    if (inst->split_ints != NULL)
        inst->free_mem(inst->split_ints);
    if (inst->split_work != NULL)
        inst->free_mem(inst->split_work);
    inst->split_dep = inst->split_ints = NULL;
    inst->split_work = NULL;
}

void nhb_part_reset(nhb_instance *inst)
{
    int i, r;

    if (!NHB_REPARTITION || inst->split_dep == NULL)
        return;
    for (i = 0; i < NQ; i++)
        inst->split_dep[i] = 0;
    for (r = 0; r < NM; r++)
        inst->split_dep[NHB_DEPENDENT[r]] = 1;
    inst->split_sign = 0;
}

int nhb_part_is_build(const nhb_instance *inst)
{
    int r;

    if (!NHB_REPARTITION)
        return 1;
    for (r = 0; r < NM; r++)
        if (!inst->split_dep[NHB_DEPENDENT[r]])
            return 0;
    return 1;
}

int nhb_part_start_slot(int coordinate)
{
    int r, k = 0, i;

    if (!NHB_REPARTITION || coordinate < 0 || coordinate >= NQ)
        return -1;
    for (r = 0; r < NM; r++)
        if (NHB_DEPENDENT[r] == coordinate)
            return -1;
    for (i = 0; i < coordinate; i++) {
        int dependent = 0;
        for (r = 0; r < NM; r++)
            dependent |= NHB_DEPENDENT[r] == i;
        k += !dependent;
    }
    return k;
}

/* dep[0..m) and ind[0..p) of a split given by flags (increasing indices). */
static void split_lists(const int *flags, int *dep, int *ind)
{
    int i, a = 0, b = 0;

    for (i = 0; i < NQ; i++) {
        if (flags[i])
            dep[a++] = i;
        else
            ind[b++] = i;
    }
}

/* "x, y" of the coordinates with flags[i] == want. */
static const char *names_of(char *buf, size_t len, const int *flags, int want)
{
    size_t used = 0;
    int i;

    buf[0] = '\0';
    for (i = 0; i < NQ && used + 1 < len; i++)
        if ((flags[i] != 0) == want)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", NHB_COORDINATE_NAMES[i]);
    return buf;
}

/* LU with partial pivoting of a (k x k, row-major, in place); *sign: the determinant's sign. Returns 1 when a
 * pivot is (numerically) zero: |pivot| <= 1e-14 max|a| (as nhb_lu_solve). */
static int lu_factor(int k, double *a, int *piv, int *sign)
{
    double amax = 0.0;
    int i, j, c;

    for (i = 0; i < k * k; i++)
        amax = fmax(amax, fabs(a[i]));
    *sign = 1;
    for (c = 0; c < k; c++) {
        int pr = c;
        for (i = c + 1; i < k; i++)
            if (fabs(a[i * k + c]) > fabs(a[pr * k + c]))
                pr = i;
        piv[c] = pr;
        if (!(fabs(a[pr * k + c]) > 1e-14 * amax)) {
            *sign = 0;
            return 1;
        }
        if (pr != c) {
            for (j = 0; j < k; j++) {
                double s = a[c * k + j];
                a[c * k + j] = a[pr * k + j];
                a[pr * k + j] = s;
            }
            *sign = -*sign;
        }
        if (a[c * k + c] < 0.0)
            *sign = -*sign;
        for (i = c + 1; i < k; i++) {
            double f = a[i * k + c] /= a[c * k + c];
            for (j = c + 1; j < k; j++)
                a[i * k + j] -= f * a[c * k + j];
        }
    }
    return 0;
}

/* Solve with lu_factor's result for nrhs right-hand sides b (k x nrhs, row-major, in place). */
static void lu_apply(int k, const double *a, const int *piv, int nrhs, double *b)
{
    int i, j, c;

    for (c = 0; c < k; c++) /* every interchange first: the rows of L were interchanged with them */
        if (piv[c] != c)
            for (j = 0; j < nrhs; j++) {
                double s = b[c * nrhs + j];
                b[c * nrhs + j] = b[piv[c] * nrhs + j];
                b[piv[c] * nrhs + j] = s;
            }
    for (c = 0; c < k; c++) {
        for (i = c + 1; i < k; i++)
            for (j = 0; j < nrhs; j++)
                b[i * nrhs + j] -= a[i * k + c] * b[c * nrhs + j];
    }
    for (c = k - 1; c >= 0; c--)
        for (j = 0; j < nrhs; j++) {
            double s = b[c * nrhs + j];
            for (i = c + 1; i < k; i++)
                s -= a[c * k + i] * b[i * nrhs + j];
            b[c * nrhs + j] = s / a[c * k + c];
        }
}

/* The singular values s[0..cols) of a (rows x cols, row-major, cols <= rows, overwritten) by one-sided Jacobi
 * rotations of its columns (Hestenes): the column norms once the columns are orthogonal. */
static void singular_values(int rows, int cols, double *a, double *s)
{
    int sweep, i, j, k, rotated = 1;

    for (sweep = 0; sweep < 80 && rotated; sweep++) {
        rotated = 0;
        for (i = 0; i < cols; i++)
            for (j = i + 1; j < cols; j++) {
                double al = 0.0, be = 0.0, ga = 0.0, zeta, tn, c, sn;
                for (k = 0; k < rows; k++) {
                    al += a[k * cols + i] * a[k * cols + i];
                    be += a[k * cols + j] * a[k * cols + j];
                    ga += a[k * cols + i] * a[k * cols + j];
                }
                if (!(fabs(ga) > 1e-15 * sqrt(al * be)))
                    continue;
                rotated = 1;
                zeta = (be - al) / (2.0 * ga);
                tn = (zeta >= 0.0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
                c = 1.0 / sqrt(1.0 + tn * tn);
                sn = c * tn;
                for (k = 0; k < rows; k++) {
                    const double ai = a[k * cols + i], aj = a[k * cols + j];
                    a[k * cols + i] = c * ai - sn * aj;
                    a[k * cols + j] = sn * ai + c * aj;
                }
            }
    }
    for (i = 0; i < cols; i++) {
        double ss = 0.0;
        for (k = 0; k < rows; k++)
            ss += a[k * cols + i] * a[k * cols + i];
        s[i] = sqrt(ss);
    }
}

/* sigma_max of A (m x n) without the rows with skip[r] (skip may be NULL); scratch S, sv. *rank: the singular
 * values above tol (when rank is not NULL). */
static double largest_sv(const part_work *w, const int *skip, double tol, int *rank)
{
    int r, j, rows = 0;
    double top = 0.0;

    for (r = 0; r < NM; r++) { /* columns of A^T: the kept rows of A */
        if (skip && skip[r])
            continue;
        for (j = 0; j < NQ; j++)
            w->S[j * NM + rows] = w->A[r * NQ + j];
        rows++;
    }
    if (rows == 0) {
        if (rank)
            *rank = 0;
        return 0.0;
    }
    if (rows < NM) /* pack to NQ x rows */
        for (j = 0; j < NQ; j++)
            for (r = 0; r < rows; r++)
                w->S[j * rows + r] = w->S[j * NM + r];
    singular_values(NQ, rows, w->S, w->sv);
    for (r = 0; r < rows; r++)
        top = fmax(top, w->sv[r]);
    if (rank) {
        *rank = 0;
        for (r = 0; r < rows; r++)
            *rank += w->sv[r] > tol;
    }
    return top;
}

/* sigma_min(A[:, dep]) (m x m) with the dependent coordinates dep[0..m). */
static double smallest_dep_sv(const part_work *w, const int *dep)
{
    double low = HUGE_VAL;
    int r, c;

    for (r = 0; r < NM; r++)
        for (c = 0; c < NM; c++)
            w->S[r * NM + c] = w->A[r * NQ + dep[c]];
    singular_values(NM, NM, w->S, w->sv);
    for (c = 0; c < NM; c++)
        low = fmin(low, w->sv[c]);
    return low;
}

/* A and a0 at (t, q) into the workspace. Returns 0, or 1 with inst->msg. */
static int constraints_at(nhb_instance *inst, const part_work *w, double t, const double *x)
{
    int i;

    inst->msg[0] = '\0';
    if (nhb_model_failed(inst, "nhb_split_constraints",
                         nhb_split_constraints(t, x, inst->p, inst->in, w->A, w->a0, inst->msg, sizeof inst->msg)))
        return 1;
    for (i = 0; i < NM * NQ + NM; i++) {
        if (!isfinite(i < NM * NQ ? w->A[i] : w->a0[i - NM * NQ])) {
            snprintf(inst->msg, sizeof inst->msg,
                     "the constraints are not finite at t = %.17g (NaN or Inf in %.100s); "
                     "check the constraints for a domain error or a singularity",
                     t, NHB_CONSTRAINT_NAMES[i < NM * NQ ? i / NQ : i - NM * NQ]);
            return 1;
        }
    }
    return 0;
}

/* Step 1: A, a0, the factors of A_dep (w->D, w->piv), [B, beta] (w->R) and all velocities v at (t, x) in the
 * current split; *sign: the sign of det(A_dep). Returns 0, or 1 with inst->msg. */
static int velocities(nhb_instance *inst, const part_work *w, double t, const double *x, int *sign)
{
    const int n = NQ, m = NM, p = NS;
    char buf[256];
    int r, k;

    if (constraints_at(inst, w, t, x))
        return 1;
    split_lists(inst->split_dep, w->dep, w->ind);
    for (r = 0; r < m; r++) {
        for (k = 0; k < m; k++)
            w->D[r * m + k] = w->A[r * n + w->dep[k]];
        for (k = 0; k < p; k++)
            w->R[r * (p + 1) + k] = -w->A[r * n + w->ind[k]];
        w->R[r * (p + 1) + p] = -w->a0[r];
    }
    if (lu_factor(m, w->D, w->piv, sign)) {
        snprintf(inst->msg, sizeof inst->msg,
                 "the constraints cannot be solved for the dependent velocities (%.200s) "
                 "at t = %.17g: the split is singular",
                 names_of(buf, sizeof buf, inst->split_dep, 1), t);
        return 1;
    }
    lu_apply(m, w->D, w->piv, p + 1, w->R);
    for (k = 0; k < p; k++)
        w->v[w->ind[k]] = x[n + k];
    for (r = 0; r < m; r++) {
        double s = w->R[r * (p + 1) + p];
        for (k = 0; k < p; k++)
            s += w->R[r * (p + 1) + k] * x[n + k];
        w->v[w->dep[r]] = s;
    }
    return 0;
}

int nhb_part_rhs(nhb_instance *inst, double t, const double *x, double *dx)
{
    const int n = NQ, m = NM, p = NS;
    const part_work w = layout_work(inst);
    char buf[256];
    int sign, r, i, j, k;

    if (velocities(inst, &w, t, x, &sign))
        return 1;
    if (inst->split_sign == 0) /* the sign of det(A_dep) where the split begins */
        inst->split_sign = sign;
    else if (inst->interface == NHB_CS && sign != inst->split_sign) { /* a trial step over the singular point
                                                                        (CS): rejected, the step size shrinks */
        snprintf(inst->msg, sizeof inst->msg,
                 "the split with dependent velocities %.200s was passed over at "
                 "t = %.17g (det(A_dep) changed its sign)",
                 names_of(buf, sizeof buf, inst->split_dep, 1), t);
        return 1;
    }
    inst->msg[0] = '\0';
    if (nhb_model_failed(
            inst, "nhb_split_dynamics",
            nhb_split_dynamics(t, x, w.v, inst->p, inst->in, w.M, w.h, w.Ad, w.a0d, inst->msg, sizeof inst->msg)))
        return 1;
    for (r = 0; r < m; r++) { /* step 2 */
        double s = w.a0d[r];
        for (j = 0; j < n; j++)
            s += w.Ad[r * n + j] * w.v[j];
        w.b[r] = -s;
    }
    lu_apply(m, w.D, w.piv, 1, w.b);
    for (i = 0; i < n; i++)
        w.acc[i] = 0.0;
    for (r = 0; r < m; r++)
        w.acc[w.dep[r]] = w.b[r];
    for (i = 0; i < n * p; i++)
        w.C[i] = 0.0;
    for (k = 0; k < p; k++)
        w.C[w.ind[k] * p + k] = 1.0;
    for (r = 0; r < m; r++)
        for (k = 0; k < p; k++)
            w.C[w.dep[r] * p + k] = w.R[r * (p + 1) + k];
    for (i = 0; i < n; i++) { /* step 3: M C, h - M a */
        double s = w.h[i];
        for (j = 0; j < n; j++)
            s -= w.M[i * n + j] * w.acc[j];
        w.b[i] = s;
        for (k = 0; k < p; k++) {
            double c = 0.0;
            for (j = 0; j < n; j++)
                c += w.M[i * n + j] * w.C[j * p + k];
            w.MC[i * p + k] = c;
        }
    }
    for (k = 0; k < p; k++) {
        double f = 0.0;
        for (i = 0; i < n; i++)
            f += w.C[i * p + k] * w.b[i];
        w.Fr[k] = f;
        for (j = 0; j < p; j++) {
            double s = 0.0;
            for (i = 0; i < n; i++)
                s += w.C[i * p + k] * w.MC[i * p + j];
            w.Mr[k * p + j] = s;
        }
    }
    if (lu_factor(p, w.Mr, w.piv2, &sign)) {
        snprintf(inst->msg, sizeof inst->msg,
                 "the mass matrix projected onto the independent velocities (%.200s) is "
                 "singular at t = %.17g",
                 names_of(buf, sizeof buf, inst->split_dep, 0), t);
        return 1;
    }
    lu_apply(p, w.Mr, w.piv2, 1, w.Fr);
    for (i = 0; i < n; i++)
        dx[i] = w.v[i];
    for (k = 0; k < p; k++)
        dx[n + k] = w.Fr[k];
    return 0;
}

int nhb_part_outputs(nhb_instance *inst, double t, const double *x, double *v, double *y, double *r)
{
    const part_work w = layout_work(inst);
    int sign;

    if (velocities(inst, &w, t, x, &sign))
        return 1;
    memcpy(v, w.v, (size_t)NQ * sizeof(double));
    inst->msg[0] = '\0';
    return nhb_model_failed(inst, "nhb_split_outputs",
                            nhb_split_outputs(t, x, v, inst->p, inst->in, y, r, inst->msg, sizeof inst->msg));
}

/* The sign of det(A[:, dep]) (0: singular). */
static int dep_sign(const part_work *w, const int *dep)
{
    int r, c, sign;

    for (r = 0; r < NM; r++)
        for (c = 0; c < NM; c++)
            w->D[r * NM + c] = w->A[r * NQ + dep[c]];
    lu_factor(NM, w->D, w->piv, &sign);
    return sign;
}

/* The health is signed: negative once det(A_dep) has changed its sign since the split began, so that the
 * indicator also changes its sign where a step passes the singular point (the unsigned health only dips to 0
 * there, which a step can miss). */
int nhb_part_indicator(nhb_instance *inst, double t, const double *x, double *z)
{
    const part_work w = layout_work(inst);
    double top, health;
    int sign;

    if (constraints_at(inst, &w, t, x))
        return 1;
    split_lists(inst->split_dep, w.dep, w.ind);
    top = largest_sv(&w, NULL, 0.0, NULL);
    health = top > 0.0 ? smallest_dep_sv(&w, w.dep) / top : 0.0;
    sign = dep_sign(&w, w.dep);
    if (inst->split_sign != 0 && sign != inst->split_sign)
        health = -health;
    *z = health - NHB_SPLIT_THRESHOLD;
    return 0;
}

/* The next choice of m dependent coordinates in the order of bridge.model.mechanics.all_splits
 * (combinations of n-1, n-2, ..., 0): pos[] are positions in that sequence. Returns 0 after the last one. */
static int next_combination(int *pos, int m, int n)
{
    int i = m - 1, j;

    while (i >= 0 && pos[i] == n - m + i)
        i--;
    if (i < 0)
        return 0;
    pos[i]++;
    for (j = i + 1; j < m; j++)
        pos[j] = pos[j - 1] + 1;
    return 1;
}

static double binomial(int n, int k)
{
    double c = 1.0;
    int i;

    for (i = 1; i <= k; i++)
        c = c * (n - k + i) / i;
    return c;
}

/* The native choice (bridge.model.mechanics.choose_independent, the current split excluded): among splits of
 * health > NHB_SPLIT_USABLE that the method accepts, the best by (health >= NHB_SPLIT_GOOD, the number of cyclic
 * dependent coordinates when it is, health), the earlier on ties; for more than NHB_SPLIT_MAX_CANDIDATES the
 * columns of column-pivoted QR of A (coordinates in reverse order). flags: the best split's dependent flags;
 * *health its health (-1: none); *any_health: the best health of any split, accepted or not. */
static void choose(const part_work *w, const int *current, int *flags, double *health, double *any_health)
{
    const int n = NQ, m = NM;
    const double top = largest_sv(w, NULL, 0.0, NULL);
    int pos[64], dep[64], i;
    int best_good = 0, best_cyc = 0;

    *health = -1.0;
    *any_health = 0.0;
    if (!(top > 0.0) || m > 64)
        return;
    if (binomial(n, m) > NHB_SPLIT_MAX_CANDIDATES) { /* Gram-Schmidt with column pivoting */
        double *Q = w->S;                            /* n x m scratch: columns of A in reverse order, as rows of Q */
        int used[512] = {0};
        if (n > 512)
            return;
        for (i = 0; i < n; i++)
            flags[i] = 0;
        for (i = 0; i < n; i++) {
            int r;
            for (r = 0; r < m; r++)
                Q[i * m + r] = w->A[r * n + (n - 1 - i)];
        }
        for (i = 0; i < m; i++) {
            int c, best = -1, r;
            double bn = -1.0, nrm;
            for (c = 0; c < n; c++) {
                double s = 0.0;
                if (used[c])
                    continue;
                for (r = 0; r < m; r++)
                    s += Q[c * m + r] * Q[c * m + r];
                if (s > bn)
                    bn = s, best = c;
            }
            used[best] = 1;
            flags[n - 1 - best] = 1;
            nrm = sqrt(bn);
            if (!(nrm > 0.0))
                break;
            for (c = 0; c < n; c++) {
                double d = 0.0;
                if (used[c])
                    continue;
                for (r = 0; r < m; r++)
                    d += Q[c * m + r] * Q[best * m + r] / nrm;
                for (r = 0; r < m; r++)
                    Q[c * m + r] -= d * Q[best * m + r] / nrm;
            }
        }
        split_lists(flags, dep, w->ind);
        *health = *any_health = smallest_dep_sv(w, dep) / top;
        return;
    }
    for (i = 0; i < m; i++)
        pos[i] = i;
    do {
        int same = 1, accepted = 1, good, cyc = 0, k;
        double hl;
        for (k = 0; k < m; k++)
            dep[m - 1 - k] = n - 1 - pos[k]; /* increasing coordinate indices */
        for (k = 0; k < m; k++) {
            same &= current[dep[k]] != 0;
            accepted &= NHB_SPLIT_MAY_DEPEND[dep[k]] != 0;
            cyc += NHB_SPLIT_CYCLIC[dep[k]] != 0;
        }
        if (same)
            continue;
        hl = smallest_dep_sv(w, dep) / top;
        if (!(hl > NHB_SPLIT_USABLE))
            continue;
        *any_health = fmax(*any_health, hl);
        if (!accepted)
            continue;
        good = hl >= NHB_SPLIT_GOOD;
        if (!good)
            cyc = 0;
        if (*health < 0.0 || good > best_good ||
            (good == best_good && (cyc > best_cyc || (cyc == best_cyc && hl > *health)))) {
            *health = hl, best_good = good, best_cyc = cyc;
            for (k = 0; k < n; k++)
                flags[k] = 0;
            for (k = 0; k < m; k++)
                flags[dep[k]] = 1;
        }
    } while (next_combination(pos, m, n));
}

/* "'row a', 'row b'" of the constraints that are dependent at the tolerance of the split threshold: the rows
 * whose removal keeps the rank of A (all rows when A has full rank there). */
static const char *dependent_rows(const part_work *w, char *buf, size_t len)
{
    int skip[64] = {0}, rank, rank_r, r, named = 0;
    size_t used = 0;
    const double top = largest_sv(w, NULL, 0.0, NULL), tol = NHB_SPLIT_THRESHOLD * top;

    buf[0] = '\0';
    largest_sv(w, NULL, tol, &rank);
    for (r = 0; r < NM && r < 64; r++) {
        skip[r] = 1;
        largest_sv(w, skip, tol, &rank_r);
        skip[r] = 0;
        if (rank == NM || rank_r == rank) {
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", named ? ", " : "",
                                     NHB_CONSTRAINT_NAMES[r]);
            named++;
        }
    }
    return buf;
}

int nhb_part_change(nhb_instance *inst, const char *func, double t, double *x)
{
    const part_work w = layout_work(inst);
    int flags[512], sign, k;
    double health, any;
    char old_ind[256], rows[512], new_ind[256];

    if (NQ > 512) {
        snprintf(inst->msg, sizeof inst->msg,
                 "at t = %.9g the split becomes singular; more than 512 coordinates "
                 "cannot re-partition",
                 t);
        return 1;
    }
    if (velocities(inst, &w, t, x, &sign))
        return 1;
    names_of(old_ind, sizeof old_ind, inst->split_dep, 0);
    choose(&w, inst->split_dep, flags, &health, &any);
    if (health < NHB_SPLIT_THRESHOLD) {
        if (any >= NHB_SPLIT_THRESHOLD)
            snprintf(inst->msg, sizeof inst->msg,
                     "at t = %.9g the split with independent %.120s becomes singular and "
                     "method %.40s has no other usable split; use maggi or lagrange",
                     t, old_ind, NHB_SPLIT_METHOD);
        else
            snprintf(
                inst->msg, sizeof inst->msg,
                "at t = %.9g the split with independent %.60s becomes singular and no "
                "split of the velocities is regular (health below %g for every choice): the constraint rows %.140s "
                "are dependent there, a singular configuration of the constraints; check the constraints and "
                "the start state",
                t, old_ind, NHB_SPLIT_THRESHOLD, dependent_rows(&w, rows, sizeof rows));
        return 1;
    }
    for (k = 0; k < NQ; k++)
        inst->split_dep[k] = flags[k];
    split_lists(inst->split_dep, w.dep, w.ind);
    for (k = 0; k < NS; k++)
        x[NQ + k] = w.v[w.ind[k]];
    inst->split_sign = dep_sign(&w, w.dep);
    nhb_log(inst, NHB_OK,
            "%s: t = %.17g: the split with independent %.150s is re-partitioned: independent %.150s "
            "(health %.3g)",
            func, t, old_ind, names_of(new_ind, sizeof new_ind, inst->split_dep, 0), health);
    return 0;
}
