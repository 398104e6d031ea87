/* Hand-written scalar test model for test_runtime.c (integrator and error paths):
 *
 *   der(x) = a x^2 + b (c - x) + u,     y = x,     fails (nonzero return) when |x| > xmax
 *
 * Defaults a = 0, b = 1, c = 0, u = 0, x(0) = 1 give x = exp(-t). a = 1, b = 0 blows up at t = 1
 * (x = 1/(1 - t)); a large b makes the problem stiff. Value reference 0 is time, as in FMI 3; the
 * same table serves both FMI layers (test_runtime.c links both).
 */
#include <math.h>
#include <stdio.h>

#include "nhb_model.h"
#include "model_no_jacobian.h" /* no directional derivatives */

const char *const NHB_MODEL_NAME = "Scalar";
const char *const NHB_GUID = "{scalar-test-model}";

const int NHB_NX = 1, NHB_NQ = 1, NHB_NP = 4, NHB_NIN = 1, NHB_NV = 1, NHB_NY = 1, NHB_NLAM = 0, NHB_NRES = 0;

const nhb_variable NHB_VARIABLES[] = {
    {0u, NHB_TIME, 0},
    {1u, NHB_STATE, 0},      /* x */
    {2u, NHB_DERIVATIVE, 0}, /* der(x) */
    {3u, NHB_PARAMETER, 0},  /* a */
    {4u, NHB_PARAMETER, 1},  /* b */
    {5u, NHB_PARAMETER, 2},  /* c */
    {6u, NHB_PARAMETER, 3},  /* xmax */
    {7u, NHB_INPUT, 0},      /* u */
    {8u, NHB_OUTPUT, 0},     /* y */
};
const int NHB_NVARS = (int)(sizeof NHB_VARIABLES / sizeof NHB_VARIABLES[0]);

const double NHB_X0[] = {1.0};
const double NHB_NOMINALS[] = {1.0};
const double NHB_P0[] = {0.0, 1.0, 0.0, 1e6};
const double NHB_IN0[] = {0.0};

int nhb_rhs(double t, const double *x, const double *p, const double *in, const int *modes, double *dx,
            double *lam, char *msg, size_t msg_len)
{
    (void)modes;
    (void)t;
    (void)lam;
    if (fabs(x[0]) > p[3]) {
        /* the '%' checks that the FMI 2 layer escapes messages (its logger takes a format string) */
        snprintf(msg, msg_len, "x = %g exceeds xmax = %g (100 %% of the admissible range)", x[0], p[3]);
        return 1;
    }
    dx[0] = p[0] * x[0] * x[0] + p[1] * (p[2] - x[0]) + in[0];
    return 0;
}

int nhb_outputs(double t, const double *x, const double *p, const double *in, const double *lam, double *v,
                double *y, double *r, char *msg, size_t msg_len)
{
    (void)lam;
    (void)t;
    (void)r;
    (void)msg;
    (void)msg_len;
    v[0] = p[0] * x[0] * x[0] + p[1] * (p[2] - x[0]) + in[0]; /* der(x) */
    y[0] = x[0];
    return 0;
}
