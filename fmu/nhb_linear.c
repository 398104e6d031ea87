/* nhbridge FMU runtime: the model functions of a linear model (nhbridge linearize --fmu).
 *
 * The generated model.c of a linear FMU holds only data: the sizes NHB_NX (states), NHB_NIN (inputs) and
 * NHB_NY (outputs), the tables of nhb_model.h and the start values. Its parameters p are the matrices and the
 * operating point, row-major, in this order:
 *
 *   A (NX x NX), B (NX x NIN), C (NY x NX), D (NY x NIN), x0 (NX), u0 (NIN), y0 (NY)
 *
 * and this file evaluates
 *
 *   dx = A (x - x0) + B (in - u0),    y = y0 + C (x - x0) + D (in - u0),    J = [[A, B], [C, D]]
 *
 * (J row-major, rows (dx, y), columns (x, in): the directional derivatives of nhb_jacobian.c). Every state
 * counts as a coordinate (NHB_NQ = NHB_NX, so that the runtime's messages name it); there are no velocities,
 * multipliers or constraint residuals (the model.c of a linear FMU says NHB_NV = NHB_NLAM = NHB_NRES = 0).
 */
#include <math.h>
#include <stdio.h>

#include "nhb_model.h"

/* Where each block of the parameter vector starts. */
typedef struct {
    int A, B, C, D, x0, u0, y0;
} linear_offsets;

static linear_offsets offsets(void)
{
    const int n = NHB_NX, m = NHB_NIN, p = NHB_NY;
    linear_offsets o;

    o.A = 0;
    o.B = o.A + n * n;
    o.C = o.B + n * m;
    o.D = o.C + p * n;
    o.x0 = o.D + p * m;
    o.u0 = o.x0 + n;
    o.y0 = o.u0 + m;
    return o;
}

/* dx = A (x - x0) + B (in - u0) */
int nhb_rhs(double t, const double *x, const double *p, const double *in, const int *modes, double *dx, double *lam,
            char *msg, size_t msg_len)
{
    const int n = NHB_NX, m = NHB_NIN;
    const linear_offsets o = offsets();
    int i, j, k;

    (void)modes;
    (void)lam;
    for (i = 0; i < n; ++i) {
        double s = 0.0;
        for (j = 0; j < n; ++j)
            s += p[o.A + i * n + j] * (x[j] - p[o.x0 + j]);
        for (k = 0; k < m; ++k)
            s += p[o.B + i * m + k] * (in[k] - p[o.u0 + k]);
        if (!isfinite(s)) {
            snprintf(msg, msg_len, "the derivatives are not finite at t = %.17g", t);
            return 2;
        }
        dx[i] = s;
    }
    return 0;
}

/* y = y0 + C (x - x0) + D (in - u0); no velocities, no residuals */
const int NHB_OUTPUTS_USE_LAM = 0;

int nhb_outputs(double t, const double *x, const double *p, const double *in, const double *lam, double *v, double *y,
                double *r, char *msg, size_t msg_len)
{
    const int n = NHB_NX, m = NHB_NIN, ny = NHB_NY;
    const linear_offsets o = offsets();
    int l, j, k;

    (void)t;
    (void)lam;
    (void)v;
    (void)r;
    (void)msg;
    (void)msg_len;
    for (l = 0; l < ny; ++l) {
        double s = p[o.y0 + l];
        for (j = 0; j < n; ++j)
            s += p[o.C + l * n + j] * (x[j] - p[o.x0 + j]);
        for (k = 0; k < m; ++k)
            s += p[o.D + l * m + k] * (in[k] - p[o.u0 + k]);
        y[l] = s;
    }
    return 0;
}

/* J = [[A, B], [C, D]]: rows (dx, y), columns (x, in), row-major */
const int NHB_HAS_JACOBIAN = 1;

int nhb_jacobian(double t, const double *x, const double *p, const double *in, const double *z, double *J, char *msg,
                 size_t msg_len)
{
    const int n = NHB_NX, m = NHB_NIN, ny = NHB_NY, cols = NHB_NX + NHB_NIN;
    const linear_offsets o = offsets();
    int i, l, j, k;

    (void)t;
    (void)x;
    (void)in;
    (void)z;
    (void)msg;
    (void)msg_len;
    for (i = 0; i < n; ++i) {
        for (j = 0; j < n; ++j)
            J[i * cols + j] = p[o.A + i * n + j];
        for (k = 0; k < m; ++k)
            J[i * cols + n + k] = p[o.B + i * m + k];
    }
    for (l = 0; l < ny; ++l) {
        for (j = 0; j < n; ++j)
            J[(n + l) * cols + j] = p[o.C + l * n + j];
        for (k = 0; k < m; ++k)
            J[(n + l) * cols + n + k] = p[o.D + l * m + k];
    }
    return 0;
}
