/* Unit test of nhb_lu_solve and nhb_lu_solve_many (fmu/nhb_linalg.c). Build and run (check_runtime.py
 * does this, also with -DNHB_LU_SCALAR, the loop without the vector extension):
 *   gcc -std=c99 -O2 -Wall -Wextra -I fmu fmu/tests/test_linalg.c fmu/nhb_linalg.c -lm && ./a.out
 * Prints one line per failed check and exits with the number of failures.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nhb_model.h"

#define NMAX 16

static int failures = 0;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

/* Deterministic pseudo-random numbers in [-1, 1) (LCG; no dependence on rand()). */
static double rnd(unsigned long *state)
{
    *state = (*state * 6364136223846793005UL + 1442695040888963407UL) & 0xFFFFFFFFFFFFUL;
    return (double)(*state >> 16) / 2147483648.0 - 1.0; /* 32 bits -> [0, 2) -> [-1, 1) */
}

/* Textbook Gaussian elimination with partial pivoting, one element at a time, and the back
 * substitution row by row with each row's terms in descending column order: the reference that
 * nhb_lu_solve (with or without its two-column vector loop; back substitution by columns) must match
 * bit for bit. */
static void reference_solve(int n, double *A, double *b)
{
    int i, j, k;
    for (k = 0; k < n; k++) {
        int p = k;
        for (i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > fabs(A[p * n + k]))
                p = i;
        for (j = 0; j < n; j++) {
            double t = A[k * n + j];
            A[k * n + j] = A[p * n + j];
            A[p * n + j] = t;
        }
        {
            double t = b[k];
            b[k] = b[p];
            b[p] = t;
        }
        for (i = k + 1; i < n; i++) {
            double l = A[i * n + k] / A[k * n + k];
            if (l == 0.0)
                continue;
            for (j = k + 1; j < n; j++)
                A[i * n + j] -= l * A[k * n + j];
            b[i] -= l * b[k];
        }
    }
    for (i = n - 1; i >= 0; i--) { /* each row's terms in descending column order, then the division */
        double s = b[i];
        for (j = n - 1; j > i; j--)
            s -= A[i * n + j] * b[j];
        b[i] = s / A[i * n + i];
    }
}

/* Solve a random well-conditioned system A z = A x_true scaled by `scale`; return max |z - x_true|. */
static double random_solve_error(int n, double scale, unsigned long *state, int *rc)
{
    double A[NMAX * NMAX], A0[NMAX * NMAX], b[NMAX], x[NMAX], err = 0.0;
    int i, j;

    for (i = 0; i < n; i++) {
        x[i] = rnd(state);
        for (j = 0; j < n; j++)
            A[i * n + j] = rnd(state) + (i == j ? (double)n : 0.0); /* diagonally dominant */
    }
    for (i = 0; i < n * n; i++)
        A[i] *= scale;
    memcpy(A0, A, sizeof A);
    for (i = 0; i < n; i++) {
        b[i] = 0.0;
        for (j = 0; j < n; j++)
            b[i] += A0[i * n + j] * x[j];
    }
    *rc = nhb_lu_solve(n, A, b);
    for (i = 0; i < n; i++)
        err = fmax(err, fabs(b[i] - x[i]));
    return err;
}

int main(void)
{
    unsigned long state = 12345UL;
    int n, rc;
    char what[128];

    /* random systems of all sizes and very different scales: solved to round-off */
    for (n = 1; n <= NMAX; n++) {
        const double scales[] = {1.0, 1e-150, 1e150};
        int s;
        for (s = 0; s < 3; s++) {
            double err = random_solve_error(n, scales[s], &state, &rc);
            snprintf(what, sizeof what, "random n = %d, scale %g: rc = %d, error %g", n, scales[s], rc, err);
            check(rc == 0 && err < 1e-12, what);
        }
    }

    /* random systems that need pivoting (not diagonally dominant), every size up to 40, odd and even
     * (the vector loop takes two columns at a time): the same bits as the reference */
    for (n = 1; n <= 40; n++) {
        double A[40 * 40], R[40 * 40], b[40], r[40];
        int i;
        for (i = 0; i < n * n; i++)
            A[i] = R[i] = rnd(&state);
        for (i = 0; i < n; i++)
            b[i] = r[i] = rnd(&state);
        rc = nhb_lu_solve(n, A, b);
        reference_solve(n, R, r);
        snprintf(what, sizeof what, "random n = %d with pivoting: rc = %d, same bits as the reference", n, rc);
        check(rc == 0 && memcmp(b, r, (size_t)n * sizeof b[0]) == 0, what);
    }

    /* needs pivoting: [[0, 1], [1, 0]] z = [2, 3] -> z = [3, 2] */
    {
        double A[4] = {0.0, 1.0, 1.0, 0.0}, b[2] = {2.0, 3.0};
        rc = nhb_lu_solve(2, A, b);
        check(rc == 0 && b[0] == 3.0 && b[1] == 2.0, "permutation matrix");
    }

    /* singular: zero matrix, rank-deficient (at every scale), zero column */
    {
        double A[4] = {0.0, 0.0, 0.0, 0.0}, b[2] = {1.0, 1.0};
        check(nhb_lu_solve(2, A, b) == 1, "zero matrix -> pivot 1");
    }
    {
        const double scales[] = {1.0, 1e-200, 1e200};
        int s;
        for (s = 0; s < 3; s++) {
            double k = scales[s];
            double A[9] = {1 * k, 2 * k, 3 * k, 4 * k, 5 * k, 6 * k, 7 * k, 8 * k, 9 * k}, b[3] = {1, 1, 1};
            rc = nhb_lu_solve(3, A, b);
            snprintf(what, sizeof what, "rank-2 3x3 at scale %g -> pivot 3 (got %d)", k, rc);
            check(rc == 3, what);
        }
    }
    {
        double A[4] = {1.0, 0.0, 2.0, 0.0}, b[2] = {1.0, 1.0};
        check(nhb_lu_solve(2, A, b) == 2, "zero column -> pivot 2");
    }

    /* nearly singular relative to the largest entry: rejected; tiny but regular: accepted */
    {
        double A[4] = {1.0, 0.0, 0.0, 1e-15}, b[2] = {1.0, 1.0};
        check(nhb_lu_solve(2, A, b) == 2, "diag(1, 1e-15) is singular (relative test)");
    }
    {
        double A[4] = {1e-300, 0.0, 0.0, 1e-300}, b[2] = {1e-300, 2e-300};
        rc = nhb_lu_solve(2, A, b);
        check(rc == 0 && fabs(b[0] - 1.0) < 1e-15 && fabs(b[1] - 2.0) < 1e-15, "diag(1e-300, 1e-300) is regular");
    }

    /* non-finite entries are reported, never returned as a solution */
    {
        double A[4] = {1.0, NAN, 0.0, 1.0}, b[2] = {1.0, 1.0};
        check(nhb_lu_solve(2, A, b) != 0, "NaN entry");
    }
    {
        double A[4] = {1.0, INFINITY, 0.0, 1.0}, b[2] = {1.0, 1.0};
        check(nhb_lu_solve(2, A, b) != 0, "Inf entry");
    }
    /* n * n not a multiple of 4: the last entry is scanned separately */
    {
        double A[9] = {2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, NAN}, b[3] = {1.0, 1.0, 1.0};
        check(nhb_lu_solve(3, A, b) != 0, "NaN as the 9th of 9 entries");
    }
    {
        double A[9] = {2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, -INFINITY}, b[3] = {1.0, 1.0, 1.0};
        check(nhb_lu_solve(3, A, b) != 0, "-Inf as the 9th of 9 entries");
    }
    {
        double A[9] = {2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, -4.0}, b[3] = {1.0, 1.0, 1.0};
        check(nhb_lu_solve(3, A, b) == 0 && b[0] == 0.5 && b[1] == 0.5 && b[2] == -0.25,
              "3 x 3 diagonal with its largest entry last");
    }
    /* the scale of the pivot test comes from the largest entry wherever it is (here the 16th of 16) */
    {
        double A[16] = {1e-3, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1e12};
        double b[4] = {1.0, 1.0, 1.0, 1.0};
        check(nhb_lu_solve(4, A, b) == 1, "pivot 1e-3 is zero next to 1e12 (ratio below 1e-14)");
    }

    /* n = 0: nothing to do */
    check(nhb_lu_solve(0, NULL, NULL) == 0, "n = 0");

    /* nhb_lu_solve_many: each column has the same bits as nhb_lu_solve of that column alone (random
     * dense matrices, so no zero entries of U, whose terms the many-column back substitution skips) */
    for (n = 1; n <= 20; n++) {
        enum { NRHS = 5 };
        double A[20 * 20], A1[20 * 20], B0[20 * NRHS], B[20 * NRHS], b[20];
        int i, c, same;
        for (i = 0; i < n * n; i++)
            A[i] = A1[i] = rnd(&state);
        for (i = 0; i < n * NRHS; i++)
            B[i] = B0[i] = rnd(&state);
        rc = nhb_lu_solve_many(n, A1, NRHS, B);
        same = rc == 0;
        for (c = 0; c < NRHS; c++) {
            memcpy(A1, A, sizeof A);
            for (i = 0; i < n; i++)
                b[i] = B0[i * NRHS + c];
            same = same && nhb_lu_solve(n, A1, b) == 0;
            for (i = 0; i < n; i++)
                same = same && memcmp(&b[i], &B[i * NRHS + c], sizeof b[i]) == 0;
        }
        snprintf(what, sizeof what, "many right-hand sides, n = %d: rc = %d, the bits of nhb_lu_solve", n, rc);
        check(same, what);
    }
    {
        double A[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, B[6] = {1, 2, 3, 4, 5, 6};
        check(nhb_lu_solve_many(3, A, 2, B) == 3, "many right-hand sides: rank-2 3x3 -> pivot 3");
    }
    {
        double A[4] = {1.0, NAN, 0.0, 1.0}, B[4] = {1.0, 1.0, 1.0, 1.0};
        check(nhb_lu_solve_many(2, A, 2, B) != 0, "many right-hand sides: NaN entry");
    }
    /* a non-finite right-hand side entry stays in the rows coupled to it (here: none) */
    {
        double A[4] = {2.0, 0.0, 0.0, 4.0}, B[4] = {1.0, 2.0, INFINITY, 1.0};
        rc = nhb_lu_solve_many(2, A, 2, B);
        check(rc == 0 && B[0] == 0.5 && B[1] == 1.0 && isinf(B[2]) && B[3] == 0.25,
              "many right-hand sides: diag(2, 4), an infinite entry does not spread");
    }
    check(nhb_lu_solve_many(0, NULL, 3, NULL) == 0, "many right-hand sides: n = 0");

    printf("test_linalg: %d failure(s)\n", failures);
    return failures;
}
