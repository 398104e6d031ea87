/* Hand-written test model for test_integrator.c: the harmonic oscillator, which has a closed form
 *
 *   der(x) = v,   der(v) = -w^2 x + u,      x(t) = cos(w t), v(t) = -w sin(w t)  for x(0) = 1, v(0) = 0, u = 0
 *
 * and fails (nonzero return) when |x| > xmax. Value references (FMI 3 style, also accepted by the
 * FMI 2 layer): 0 time, 1 x, 2 v, 3 der(v), 4 w, 5 xmax, 6 u, 7 der(x) (velocity, from nhb_outputs).
 */
#include <math.h>
#include <stdio.h>

#include "nhb_model.h"
#include "model_no_jacobian.h" /* no directional derivatives */

const char *const NHB_MODEL_NAME = "Oscillator";
const char *const NHB_GUID = "{oscillator-test-model}";

const int NHB_NX = 2, NHB_NQ = 1, NHB_NP = 2, NHB_NIN = 1, NHB_NV = 1, NHB_NY = 0, NHB_NLAM = 0, NHB_NRES = 0;

const nhb_variable NHB_VARIABLES[] = {
    {0u, NHB_TIME, 0},
    {1u, NHB_STATE, 0},      /* x */
    {2u, NHB_STATE, 1},      /* v = der(x) */
    {3u, NHB_DERIVATIVE, 1}, /* der(v) */
    {4u, NHB_PARAMETER, 0},  /* w */
    {5u, NHB_PARAMETER, 1},  /* xmax */
    {6u, NHB_INPUT, 0},      /* u */
    {7u, NHB_VELOCITY, 0},   /* der(x) */
};
const int NHB_NVARS = (int)(sizeof NHB_VARIABLES / sizeof NHB_VARIABLES[0]);

const double NHB_X0[] = {1.0, 0.0};
const double NHB_NOMINALS[] = {1.0, 1.0};
const double NHB_P0[] = {6.283185307179586, 1e6}; /* w = 2 pi: period 1 */
const double NHB_IN0[] = {0.0};

int nhb_rhs(double t, const double *x, const double *p, const double *in, const int *modes, double *dx,
            double *lam, char *msg, size_t msg_len)
{
    (void)modes;
    (void)lam;
    if (fabs(x[0]) > p[1]) {
        snprintf(msg, msg_len, "x = %g exceeds xmax = %g at t = %g", x[0], p[1], t);
        return 1;
    }
    dx[0] = x[1];
    dx[1] = -p[0] * p[0] * x[0] + in[0];
    return 0;
}

int nhb_outputs(double t, const double *x, const double *p, const double *in, const double *lam, double *v,
                double *y, double *r, char *msg, size_t msg_len)
{
    (void)lam;
    (void)t;
    (void)p;
    (void)in;
    (void)y;
    (void)r;
    (void)msg;
    (void)msg_len;
    v[0] = x[1];
    return 0;
}
