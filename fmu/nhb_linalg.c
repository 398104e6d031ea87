/* nhbridge FMU runtime: dense linear algebra for the generated model code.
 *
 * nhb_lu_solve() solves A z = b, nhb_lu_solve_many() A Z = B for many right-hand sides with one
 * factorization, both by Gaussian elimination with partial (row) pivoting (lu_eliminate below). The
 * generated nhb_rhs() uses nhb_lu_solve for the mass-matrix system M(q) du = f(q, u), the generated
 * nhb_jacobian() uses nhb_lu_solve_many for the derivatives of du. Written for the small dense systems
 * of mechanical models (n up to a few dozen): no blocking, no allocation, no recursion.
 *
 * Singularity test: the pivot of column k is declared (numerically) zero when
 *     |pivot| <= NHB_LU_PIVOT_RTOL * max_ij |A_ij|      (max over the ORIGINAL matrix)
 * which is scale free: multiplying A by any constant does not change the verdict. Non-finite
 * entries (NaN, Inf) also make the test fail, so that garbage never silently propagates.
 */
#include <math.h>
#include <string.h>

#include "nhb_model.h"

/* Relative pivot threshold (see above). */
#define NHB_LU_PIVOT_RTOL 1e-14

/* The row update of the elimination, two columns at a time with the GCC/Clang vector extension
 * (SSE2 on x86-64, NEON on AArch64), because -O2 does not vectorize this loop itself. Every
 * element gets the same two IEEE operations as in the scalar loop, so the results are bit for bit
 * the same. With the branch-free scan for max|A| below, nhb_lu_solve takes 2/3 of the time it took
 * with the plain loops (n = 10, 18, 34: 0.62 -> 0.42, 2.06 -> 1.30, 8.9 -> 5.9 us on the snake
 * benchmark's matrices). Define NHB_LU_SCALAR to disable. */
#if defined(__GNUC__) && !defined(NHB_LU_SCALAR)
#define NHB_LU_VECTOR 1
typedef double nhb_v2d __attribute__((vector_size(2 * sizeof(double))));
#endif

/* Largest absolute entry of the n x n matrix A in *amax; returns 0 if an entry is NaN or infinite
 * (a - a is 0 for a finite a, NaN otherwise), else 1. Four independent maxima and two sums, without
 * branches, so that the scan does not cost as much as the elimination (n = 18: 1/3 of the time
 * otherwise). */
static int abs_max(int n, const double *A, double *amax)
{
    const int nn = n * n;
    double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0, z0 = 0.0, z1 = 0.0;
    int i;
    for (i = 0; i + 4 <= nn; i += 4) {
        double a0 = fabs(A[i]), a1 = fabs(A[i + 1]), a2 = fabs(A[i + 2]), a3 = fabs(A[i + 3]);
        m0 = a0 > m0 ? a0 : m0;
        m1 = a1 > m1 ? a1 : m1;
        m2 = a2 > m2 ? a2 : m2;
        m3 = a3 > m3 ? a3 : m3;
        z0 += (a0 - a0) + (a1 - a1);
        z1 += (a2 - a2) + (a3 - a3);
    }
    for (; i < nn; i++) {
        double a = fabs(A[i]);
        m0 = a > m0 ? a : m0;
        z0 += a - a;
    }
    *amax = fmax(fmax(m0, m1), fmax(m2, m3));
    return z0 + z1 == 0.0;
}

/* r[j] -= l * s[j] for j in [from, to): a row update of the elimination or back substitution. */
static inline void row_axpy(double *restrict r, const double *restrict s, double l, int from, int to)
{
    int j = from;
#ifdef NHB_LU_VECTOR
    const nhb_v2d lv = {l, l};
    for (; j + 2 <= to; j += 2) {
        nhb_v2d a, b; /* memcpy: unaligned loads and stores, no aliasing issue */
        memcpy(&a, r + j, sizeof a);
        memcpy(&b, s + j, sizeof b);
        a -= lv * b;
        memcpy(r + j, &a, sizeof a);
    }
#endif
    for (; j < to; j++)
        r[j] -= l * s[j];
}

/* Swap rows k and p (k != p) of the row-major matrix M with m columns. */
static void swap_rows(double *M, int m, int k, int p)
{
    double *restrict rk = M + k * m, *restrict rp = M + p * m;
    int j;
    for (j = 0; j < m; j++) {
        double t = rk[j];
        rk[j] = rp[j];
        rp[j] = t;
    }
}

/* Partial pivoting: the first row p >= k with the largest |A[p][k]|. */
static int pivot_row(int n, const double *A, int k)
{
    int i, p = k;
    double pmax = fabs(A[k * n + k]);
    for (i = k + 1; i < n; i++) {
        double a = fabs(A[i * n + k]);
        if (a > pmax) {
            pmax = a;
            p = i;
        }
    }
    return p;
}

/* Forced inline: in nhb_lu_solve, nrhs = 1 is then a constant and its loops vanish (without it, the
 * solve takes about 20% longer for n = 10). */
#if defined(__GNUC__)
#define NHB_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define NHB_ALWAYS_INLINE
#endif

/* Forward elimination with partial pivoting for A Z = B (A: n x n, B: n x nrhs, both row-major), the
 * row operations applied to all right-hand sides alongside: A becomes U with the multipliers (the L
 * factor) below the diagonal, B the right-hand sides of U Z = B. Returns 0, or k+1 when pivot k is
 * (numerically) zero. */
static NHB_ALWAYS_INLINE int lu_eliminate(int n, double *A, int nrhs, double *B)
{
    int i, k;
    double amax, tol;

    if (n <= 0)
        return 0;
    if (!abs_max(n, A, &amax)) /* a NaN or infinite entry: fail at the first pivot */
        return 1;
    tol = NHB_LU_PIVOT_RTOL * amax;

    for (k = 0; k < n; k++) {
        const int p = pivot_row(n, A, k);
        const double *rk = A + k * n, *bk = B + k * nrhs;
        double pivot;

        /* "!(|pivot| > tol)" rather than "|pivot| <= tol": also true when it is NaN (a NaN that
         * appears during the elimination, e.g. from an overflow) */
        if (!(fabs(A[p * n + k]) > tol))
            return k + 1;
        if (p != k) {
            swap_rows(A, n, k, p);
            swap_rows(B, nrhs, k, p);
        }
        /* eliminate column k below the pivot; the multipliers are stored in place */
        pivot = rk[k];
        for (i = k + 1; i < n; i++) {
            double *ri = A + i * n;
            double l = ri[k] / pivot;
            ri[k] = l;
            if (l != 0.0) {
                row_axpy(ri, rk, l, k + 1, n);
                row_axpy(B + i * nrhs, bk, l, 0, nrhs);
            }
        }
    }
    return 0;
}

int nhb_lu_solve(int n, double *A, double *b)
{
    int i, j, rc = lu_eliminate(n, A, 1, b);

    if (rc != 0)
        return rc;
    /* back substitution with the U factor, by columns: once b[j] is final it is taken out of every row
     * above, so that the updates of the rows are independent of each other (row by row, as dot products,
     * the back substitution is one chain of n^2 / 2 dependent subtractions: it took a fifth of the solve
     * at n = 42, and the whole solve takes about 8 % less time by columns at n = 13 to 42). Each b[i]
     * subtracts its terms in descending j, then is divided by its pivot. */
    for (j = n - 1; j >= 0; j--) {
        const double bj = b[j] /= A[j * n + j];
        for (i = 0; i < j; i++)
            b[i] -= A[i * n + j] * bj;
    }
    return 0;
}

int nhb_lu_solve_many(int n, double *A, int nrhs, double *B)
{
    int i, j, c, rc = lu_eliminate(n, A, nrhs, B);

    if (rc != 0)
        return rc;
    /* back substitution, all right-hand sides at once; zero entries of U are skipped (as zero
     * multipliers in the elimination), so that a non-finite entry of B spreads only along the
     * couplings of A. A row's terms in descending j, as in nhb_lu_solve: the same bits per column. */
    for (i = n - 1; i >= 0; i--) {
        double *bi = B + i * nrhs;
        for (j = n - 1; j > i; j--)
            if (A[i * n + j] != 0.0)
                row_axpy(bi, B + j * nrhs, A[i * n + j], 0, nrhs);
        for (c = 0; c < nrhs; c++)
            bi[c] /= A[i * n + i];
    }
    return 0;
}
