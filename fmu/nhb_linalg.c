/* nhbridge FMU runtime: dense linear algebra for the generated model code.
 *
 * nhb_lu_solve() solves A z = b by Gaussian elimination with partial (row) pivoting. The generated
 * nhb_rhs() uses it for the mass-matrix system M(q) du = f(q, u). It is written for the small dense
 * systems of mechanical models (n up to a few dozen): no blocking, no allocation, no recursion.
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
 * the same. With the branch-free scan for max|A| below, the solve takes 2/3 of the time it took
 * with the plain loops (n = 10, 18, 34: 0.62 -> 0.42, 2.06 -> 1.30, 8.9 -> 5.9 us on the snake
 * benchmark's matrices). Define NHB_LU_SCALAR to disable. */
#if defined(__GNUC__) && !defined(NHB_LU_SCALAR)
#define NHB_LU_VECTOR 1
typedef double nhb_v2d __attribute__((vector_size(2 * sizeof(double))));
#endif

int nhb_lu_solve(int n, double *A, double *b)
{
    int i, j, k;
    double amax = 0.0, tol, pivot, bk;

    if (n <= 0)
        return 0;

    /* Largest absolute entry of A, and whether all entries are finite (a - a is 0 for a finite a,
     * NaN for an infinite or NaN one). Four independent maxima and two sums, without branches, so
     * that the scan does not cost as much as the elimination (n = 18: 1/3 of the time otherwise). */
    {
        const int nn = n * n;
        double m0 = 0.0, m1 = 0.0, m2 = 0.0, m3 = 0.0, z0 = 0.0, z1 = 0.0;
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
        if (!(z0 + z1 == 0.0)) /* a NaN or infinite entry: fail at the first pivot */
            return 1;
        amax = fmax(fmax(m0, m1), fmax(m2, m3));
    }
    tol = NHB_LU_PIVOT_RTOL * amax;

    /* Forward elimination, row-major: A[i*n + j] is row i, column j. */
    for (k = 0; k < n; k++) {
        int p = k;
        double pmax = fabs(A[k * n + k]);

        /* partial pivoting: the row with the largest |entry| in column k (rows k..n-1) */
        for (i = k + 1; i < n; i++) {
            double a = fabs(A[i * n + k]);
            if (a > pmax) {
                pmax = a;
                p = i;
            }
        }
        /* "!(pmax > tol)" rather than "pmax <= tol": also true when pmax is NaN (a NaN that
         * appears during the elimination, e.g. from an overflow) */
        if (!(pmax > tol))
            return k + 1;

        if (p != k) {
            double t;
            for (j = 0; j < n; j++) {
                t = A[k * n + j];
                A[k * n + j] = A[p * n + j];
                A[p * n + j] = t;
            }
            t = b[k];
            b[k] = b[p];
            b[p] = t;
        }

        /* eliminate column k below the pivot; the multipliers are stored in place (the L factor) */
        pivot = A[k * n + k];
        bk = b[k];
        for (i = k + 1; i < n; i++) {
            double *restrict ri = A + i * n;       /* row i ... */
            const double *restrict rk = A + k * n; /* ... and row k never overlap */
            double l = ri[k] / pivot;
            ri[k] = l;
            if (l != 0.0) {
                j = k + 1;
#ifdef NHB_LU_VECTOR
                {
                    const nhb_v2d lv = {l, l};
                    for (; j + 2 <= n; j += 2) {
                        nhb_v2d a, r; /* memcpy: unaligned loads and stores, no aliasing issue */
                        memcpy(&a, ri + j, sizeof a);
                        memcpy(&r, rk + j, sizeof r);
                        a -= lv * r;
                        memcpy(ri + j, &a, sizeof a);
                    }
                }
#endif
                for (; j < n; j++)
                    ri[j] -= l * rk[j];
                b[i] -= l * bk;
            }
        }
    }

    /* Back substitution with the U factor. */
    for (i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (j = i + 1; j < n; j++)
            s -= A[i * n + j] * b[j];
        b[i] = s / A[i * n + i];
    }
    return 0;
}
