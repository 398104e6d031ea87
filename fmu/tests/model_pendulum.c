/* Hand-written test model implementing the nhb_model.h contract: a planar pendulum, written the
 * way the generator writes models (mass-matrix form solved with nhb_lu_solve).
 *
 *   states      x = (theta, omega)                      [rad, rad/s]
 *   parameters  p = (m, l, g)                           [kg, m, m/s2]
 *   input       in = (tau)  external torque at the pivot [N.m]
 *   equations   der(theta) = omega
 *               m l^2 der(omega) = -m g l sin(theta) + tau
 *   output      energy = m l^2 omega^2 / 2 - m g l cos(theta)   [J]
 *
 * l = 0 (or m = 0) makes the 1x1 mass matrix singular: nhb_rhs then fails with a message; the test
 * uses this to check the runtime's error path.
 *
 * One file serves both FMI versions: with NHB_PENDULUM_FMI3 defined, value reference 0 is time
 * and the other value references are shifted by one (build_test_fmu.sh prepends the define to the
 * FMI 3 copy of this file). The generator emits one model.c per FMI version instead.
 */
#include <math.h>
#include <stdio.h>

#include "nhb_model.h"
#include "model_no_jacobian.h" /* no directional derivatives */

#ifdef NHB_PENDULUM_FMI3
#define VR0 1u /* FMI 3: value reference 0 is time */
const char *const NHB_GUID = "{5f0c3a52-8d1e-4f6b-9b7a-3c2d1e0f9a03}";
#else
#define VR0 0u /* FMI 2: value references start at 0 */
const char *const NHB_GUID = "{5f0c3a52-8d1e-4f6b-9b7a-3c2d1e0f9a02}";
#endif

const char *const NHB_MODEL_NAME = "Pendulum";

const int NHB_NX = 2;   /* theta, omega */
const int NHB_NQ = 1;   /* theta */
const int NHB_NP = 3;   /* m, l, g */
const int NHB_NIN = 1;  /* tau */
const int NHB_NV = 1;   /* der(theta) */
const int NHB_NY = 1;   /* energy */
const int NHB_NLAM = 0;
const int NHB_NRES = 0;

const nhb_variable NHB_VARIABLES[] = {
#ifdef NHB_PENDULUM_FMI3
    {0u, NHB_TIME, 0},
#endif
    {VR0 + 0u, NHB_STATE, 0},      /* theta */
    {VR0 + 1u, NHB_STATE, 1},      /* omega */
    {VR0 + 2u, NHB_DERIVATIVE, 0}, /* der(theta) */
    {VR0 + 3u, NHB_DERIVATIVE, 1}, /* der(omega) */
    {VR0 + 4u, NHB_PARAMETER, 0},  /* m */
    {VR0 + 5u, NHB_PARAMETER, 1},  /* l */
    {VR0 + 6u, NHB_PARAMETER, 2},  /* g */
    {VR0 + 7u, NHB_INPUT, 0},      /* tau */
    {VR0 + 8u, NHB_OUTPUT, 0},     /* energy */
};
const int NHB_NVARS = (int)(sizeof NHB_VARIABLES / sizeof NHB_VARIABLES[0]);

const double NHB_X0[] = {1.0, 0.0};
const double NHB_NOMINALS[] = {1.0, 1.0};
const double NHB_P0[] = {1.2, 0.8, 9.81};
const double NHB_IN0[] = {0.0};

int nhb_rhs(double t, const double *x, const double *p, const double *in, const int *modes, double *dx,
            double *lam, char *msg, size_t msg_len)
{
    (void)modes;
    const double theta = x[0], omega = x[1];
    const double m = p[0], l = p[1], g = p[2], tau = in[0];
    double M[1], f[1];
    int k;

    (void)t;
    (void)lam; /* no multipliers */

    M[0] = m * l * l;
    f[0] = -m * g * l * sin(theta) + tau;
    k = nhb_lu_solve(1, M, f);
    if (k != 0) {
        snprintf(msg, msg_len, "singular mass matrix (pivot %d) at theta = %g: m = %g, l = %g", k, theta, m, l);
        return 1;
    }
    dx[0] = omega;
    dx[1] = f[0];
    if (!isfinite(dx[0]) || !isfinite(dx[1])) {
        snprintf(msg, msg_len, "non-finite derivative at theta = %g, omega = %g", theta, omega);
        return 1;
    }
    return 0;
}

int nhb_outputs(double t, const double *x, const double *p, const double *in, const double *lam, double *v,
                double *y, double *r, char *msg, size_t msg_len)
{
    (void)lam;
    const double theta = x[0], omega = x[1];
    const double m = p[0], l = p[1], g = p[2];

    (void)t;
    (void)in;
    (void)r; /* no constraint residuals */
    v[0] = omega;
    y[0] = 0.5 * m * l * l * omega * omega - m * g * l * cos(theta);
    if (!isfinite(y[0])) {
        snprintf(msg, msg_len, "non-finite energy");
        return 1;
    }
    return 0;
}
