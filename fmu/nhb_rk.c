/* nhbridge FMU runtime, core: the embedded Runge-Kutta pairs DOPRI5 and DOP853: coefficients, error norm, initial step, dense output (see nhb_core.h, fmu/README.md). */
#include <float.h>
#include <math.h>
#include <string.h>

#include "nhb_internal.h"

/* ============================================================================================== */
/* Co-Simulation: adaptive explicit Runge-Kutta, Dormand-Prince 5(4) and DOP853                   */
/* ============================================================================================== */

/* The coefficient tables keep their rows (no reformatting). */
/* clang-format off */
/* Dormand & Prince (1980): 5th-order solution, error b5 - b4 (which needs k[6] = f(t + h, x_new)). */
static const double DP5_C[6] = {0.0, 1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0};
static const double DP5_A[15] = {
    1.0 / 5.0,
    3.0 / 40.0, 9.0 / 40.0,
    44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0,
    19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0,
    9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0,
};
static const double DP5_B[6] = {35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0};
static const double DP5_E[7] = {71.0 / 57600.0, 0.0, -71.0 / 16695.0, 71.0 / 1920.0, -17253.0 / 339200.0,
                                22.0 / 525.0, -1.0 / 40.0};

/* DOP853 (Dormand & Prince 1980; Hairer, Norsett & Wanner): 12 stages, 8th-order solution, error
 * estimate from an embedded 5th-order (E5) and 3rd-order (E3) pair, combined as
 * err = h |E5|^2 / sqrt(|E5|^2 + 0.01 |E3|^2). Coefficients as in Hairer's dop853.f (the same
 * values are in scipy/integrate/_ivp/dop853_coefficients.py). */
static const double DOP853_C[12] = {
    0.0, 0.526001519587677318785587544488e-01, 0.789002279381515978178381316732e-01,
    0.118350341907227396726757197510, 0.281649658092772603273242802490, 0.333333333333333333333333333333,
    0.25, 0.307692307692307692307692307692, 0.651282051282051282051282051282,
    0.6, 0.857142857142857142857142857142, 1.0
};
static const double DOP853_A[66] = {
    /* row 1 */
    5.26001519587677318785587544488e-2,
    /* row 2 */
    1.97250569845378994544595329183e-2, 5.91751709536136983633785987549e-2,
    /* row 3 */
    2.95875854768068491816892993775e-2, 0.0, 8.87627564304205475450678981324e-2,
    /* row 4 */
    2.41365134159266685502369798665e-1, 0.0, -8.84549479328286085344864962717e-1,
    9.24834003261792003115737966543e-1,
    /* row 5 */
    3.7037037037037037037037037037e-2, 0.0, 0.0,
    1.70828608729473871279604482173e-1, 1.25467687566822425016691814123e-1,
    /* row 6 */
    3.7109375e-2, 0.0, 0.0,
    1.70252211019544039314978060272e-1, 6.02165389804559606850219397283e-2, -1.7578125e-2,
    /* row 7 */
    3.70920001185047927108779319836e-2, 0.0, 0.0,
    1.70383925712239993810214054705e-1, 1.07262030446373284651809199168e-1, -1.53194377486244017527936158236e-2,
    8.27378916381402288758473766002e-3,
    /* row 8 */
    6.24110958716075717114429577812e-1, 0.0, 0.0,
    -3.36089262944694129406857109825, -8.68219346841726006818189891453e-1, 2.75920996994467083049415600797e1,
    2.01540675504778934086186788979e1, -4.34898841810699588477366255144e1,
    /* row 9 */
    4.77662536438264365890433908527e-1, 0.0, 0.0,
    -2.48811461997166764192642586468, -5.90290826836842996371446475743e-1, 2.12300514481811942347288949897e1,
    1.52792336328824235832596922938e1, -3.32882109689848629194453265587e1, -2.03312017085086261358222928593e-2,
    /* row 10 */
    -9.3714243008598732571704021658e-1, 0.0, 0.0,
    5.18637242884406370830023853209, 1.09143734899672957818500254654, -8.14978701074692612513997267357,
    -1.85200656599969598641566180701e1, 2.27394870993505042818970056734e1, 2.49360555267965238987089396762,
    -3.0467644718982195003823669022,
    /* row 11 */
    2.27331014751653820792359768449, 0.0, 0.0,
    -1.05344954667372501984066689879e1, -2.00087205822486249909675718444, -1.79589318631187989172765950534e1,
    2.79488845294199600508499808837e1, -2.85899827713502369474065508674, -8.87285693353062954433549289258,
    1.23605671757943030647266201528e1, 6.43392746015763530355970484046e-1,
};
static const double DOP853_B[12] = {
    5.42937341165687622380535766363e-2, 0.0, 0.0,
    0.0, 0.0, 4.45031289275240888144113950566,
    1.89151789931450038304281599044, -5.8012039600105847814672114227, 3.1116436695781989440891606237e-1,
    -1.52160949662516078556178806805e-1, 2.01365400804030348374776537501e-1, 4.47106157277725905176885569043e-2,
};
static const double DOP853_E5[13] = {
    0.1312004499419488073250102996e-1, 0.0, 0.0,
    0.0, 0.0, -0.1225156446376204440720569753e+1,
    -0.4957589496572501915214079952, 0.1664377182454986536961530415e+1, -0.3503288487499736816886487290,
    0.3341791187130174790297318841, 0.8192320648511571246570742613e-1, -0.2235530786388629525884427845e-1,
    0.0,
};
static const double DOP853_E3[13] = {
    5.42937341165687622380535766363e-2 - 0.244094488188976377952755905512, 0.0,
    0.0, 0.0,
    0.0, 4.45031289275240888144113950566,
    1.89151789931450038304281599044, -5.8012039600105847814672114227,
    3.1116436695781989440891606237e-1 - 0.733846688281611857341361741547, -1.52160949662516078556178806805e-1,
    2.01365400804030348374776537501e-1, 4.47106157277725905176885569043e-2 - 0.220588235294117647058823529412e-1,
    0.0,
};

/* Continuous extensions (dense output). DOPRI5: Shampine's quartic (Hairer's contd5, scipy's RK45.P),
 * from the stages of the step and the FSAL stage, no extra evaluation:
 *   x(t0 + s h) = x0 + h sum_j k_j (P[j][0] s + P[j][1] s^2 + P[j][2] s^3 + P[j][3] s^4). */
static const double DP5_P[7][4] = {
    {1.0, -8048581381.0 / 2820520608.0, 8663915743.0 / 2820520608.0, -12715105075.0 / 11282082432.0},
    {0.0, 0.0, 0.0, 0.0},
    {0.0, 131558114200.0 / 32700410799.0, -68118460800.0 / 10900136933.0, 87487479700.0 / 32700410799.0},
    {0.0, -1754552775.0 / 470086768.0, 14199869525.0 / 1410260304.0, -10690763975.0 / 1880347072.0},
    {0.0, 127303824393.0 / 49829197408.0, -318862633887.0 / 49829197408.0, 701980252875.0 / 199316789632.0},
    {0.0, -282668133.0 / 205662961.0, 2019193451.0 / 616988883.0, -1453857185.0 / 822651844.0},
    {0.0, 40617522.0 / 29380423.0, -110615467.0 / 29380423.0, 69997945.0 / 29380423.0},
};

/* DOP853: the 7th-order continuous extension of Hairer's dop853.f (contd8) needs three more stages
 * k[13..15] (at t0 + c h, from k[0..12], k[12] the FSAL stage); the same coefficients as scipy's
 * dop853_coefficients.py (A[13..15], C[13..15], D). With F0 = x1 - x0, F1 = h k0 - F0,
 * F2 = 2 F0 - h (k12 + k0), F3..F6 = h sum_j D[.][j] k_j and s1 = 1 - s:
 *   x(t0 + s h) = x0 + s (F0 + s1 (F1 + s (F2 + s1 (F3 + s (F4 + s1 (F5 + s F6)))))). */
static const double DOP853_C_EXTRA[3] = {0.1, 0.2, 0.777777777777777777777777777778};
static const double DOP853_A_EXTRA[3][16] = {
    {5.61675022830479523392909219681e-2, 0.0, 0.0, 0.0, 0.0, 0.0, 2.53500210216624811088794765333e-1,
     -2.46239037470802489917441475441e-1, -1.24191423263816360469010140626e-1, 1.5329179827876569731206322685e-1,
     8.20105229563468988491666602057e-3, 7.56789766054569976138603589584e-3, -8.298e-3, 0.0, 0.0, 0.0},
    {3.18346481635021405060768473261e-2, 0.0, 0.0, 0.0, 0.0, 2.83009096723667755288322961402e-2,
     5.35419883074385676223797384372e-2, -5.49237485713909884646569340306e-2, 0.0, 0.0,
     -1.08347328697249322858509316994e-4, 3.82571090835658412954920192323e-4, -3.40465008687404560802977114492e-4,
     1.41312443674632500278074618366e-1, 0.0, 0.0},
    {-4.28896301583791923408573538692e-1, 0.0, 0.0, 0.0, 0.0, -4.69762141536116384314449447206,
     7.68342119606259904184240953878, 4.06898981839711007970213554331, 3.56727187455281109270669543021e-1, 0.0,
     0.0, 0.0, -1.39902416515901462129418009734e-3, 2.9475147891527723389556272149, -9.15095847217987001081870187138,
     0.0},
};
static const double DOP853_D[4][16] = {
    {-0.84289382761090128651353491142e+1, 0.0, 0.0, 0.0, 0.0, 0.56671495351937776962531783590,
     -0.30689499459498916912797304727e+1, 0.23846676565120698287728149680e+1, 0.21170345824450282767155149946e+1,
     -0.87139158377797299206789907490, 0.22404374302607882758541771650e+1, 0.63157877876946881815570249290,
     -0.88990336451333310820698117400e-1, 0.18148505520854727256656404962e+2, -0.91946323924783554000451984436e+1,
     -0.44360363875948939664310572000e+1},
    {0.10427508642579134603413151009e+2, 0.0, 0.0, 0.0, 0.0, 0.24228349177525818288430175319e+3,
     0.16520045171727028198505394887e+3, -0.37454675472269020279518312152e+3, -0.22113666853125306036270938578e+2,
     0.77334326684722638389603898808e+1, -0.30674084731089398182061213626e+2, -0.93321305264302278729567221706e+1,
     0.15697238121770843886131091075e+2, -0.31139403219565177677282850411e+2, -0.93529243588444783865713862664e+1,
     0.35816841486394083752465898540e+2},
    {0.19985053242002433820987653617e+2, 0.0, 0.0, 0.0, 0.0, -0.38703730874935176555105901742e+3,
     -0.18917813819516756882830838328e+3, 0.52780815920542364900561016686e+3, -0.11573902539959630126141871134e+2,
     0.68812326946963000169666922661e+1, -0.10006050966910838403183860980e+1, 0.77771377980534432092869265740,
     -0.27782057523535084065932004339e+1, -0.60196695231264120758267380846e+2, 0.84320405506677161018159903784e+2,
     0.11992291136182789328035130030e+2},
    {-0.25693933462703749003312586129e+2, 0.0, 0.0, 0.0, 0.0, -0.15418974869023643374053993627e+3,
     -0.23152937917604549567536039109e+3, 0.35763911791061412378285349910e+3, 0.93405324183624310003907691704e+2,
     -0.37458323136451633156875139351e+2, 0.10409964950896230045147246184e+3, 0.29840293426660503123344363579e+2,
     -0.43533456590011143754432175058e+2, 0.96324553959188282948394950600e+2, -0.39177261675615439165231486172e+2,
     -0.14972683625798562581422125276e+3},
};

/* clang-format on */

const nhb_rk_method NHB_RK_METHODS[2] = {
    {"Dormand-Prince 5(4)", 6, 4, 1, DP5_C, DP5_A, DP5_B, DP5_E, NULL, 0.2, 5.0},
    {"DOP853", 12, 7, 0, DOP853_C, DOP853_A, DOP853_B, DOP853_E5, DOP853_E3, 1.0 / 3.0, 6.0},
};

/* Error scale of component i: atol * nominal + rtol * max(|a|, |b|). */
static double error_scale(const nhb_instance *inst, int i, double a, double b)
{
    return inst->atol * NHB_NOMINALS[i] + inst->rtol * fmax(fabs(a), fabs(b));
}

/* out = sum_{j < count} w[j] k[j], skipping zero weights (w[0] is never zero here). */
void nhb_rk_combine(int n, int count, const double *w, double *const *k, double *out)
{
    int i, j;
    for (i = 0; i < n; i++)
        out[i] = w[0] * k[0][i];
    for (j = 1; j < count; j++) {
        const double wj = w[j], *kj = k[j];
        if (wj == 0.0)
            continue;
        for (i = 0; i < n; i++)
            out[i] += wj * kj[i];
    }
}

/* Norm of the local error estimate of a step of size h from x to xn (accept if <= 1): the
 * weighted RMS norm for DOPRI5, Hairer's combination of the 5th- and 3rd-order estimates for DOP853.
 * e5 and e3 are scratch vectors. NaN propagates. */
double nhb_rk_error_norm(const nhb_instance *inst, const nhb_rk_method *m, double h, double *const *k, const double *x,
                         const double *xn, double *e5, double *e3)
{
    const int n = NHB_NX;
    double sum5 = 0.0, sum3 = 0.0, deno;
    int i;

    nhb_rk_combine(n, m->stages + 1, m->e, k, e5);
    if (m->e3 != NULL)
        nhb_rk_combine(n, m->stages + 1, m->e3, k, e3);
    for (i = 0; i < n; i++) {
        double sk = error_scale(inst, i, x[i], xn[i]);
        sum5 += (e5[i] / sk) * (e5[i] / sk);
        if (m->e3 != NULL)
            sum3 += (e3[i] / sk) * (e3[i] / sk);
    }
    if (sum5 == HUGE_VAL || sum3 == HUGE_VAL) {
        /* squares beyond the double range (derivatives near 1e300): the same norms, scaled by the
         * largest ratio, so that only a really infinite or NaN estimate rejects the step */
        double scale = 0.0;
        for (i = 0; i < n; i++) {
            double sk = error_scale(inst, i, x[i], xn[i]);
            scale = fmax(scale, fabs(e5[i] / sk));
            if (m->e3 != NULL)
                scale = fmax(scale, fabs(e3[i] / sk));
        }
        if (scale > 0.0 && isfinite(scale)) {
            sum5 = sum3 = 0.0;
            for (i = 0; i < n; i++) {
                double sk = error_scale(inst, i, x[i], xn[i]) * scale;
                sum5 += (e5[i] / sk) * (e5[i] / sk);
                if (m->e3 != NULL)
                    sum3 += (e3[i] / sk) * (e3[i] / sk);
            }
            if (m->e3 == NULL)
                return fabs(h) * scale * sqrt(sum5 / n);
            return fabs(h) * scale * sum5 / sqrt(n * (sum5 + 0.01 * sum3));
        }
    }
    if (m->e3 == NULL)
        return fabs(h) * sqrt(sum5 / n);
    deno = sum5 + 0.01 * sum3;
    if (deno <= 0.0) /* both estimates are exactly zero */
        deno = 1.0;
    return fabs(h) * sum5 / sqrt(n * deno);
}

/* Initial step size (Hairer, Norsett & Wanner, Solving ODEs I, II.4): from the size of x0, f0
 * and an estimate of the second derivative by one explicit Euler step. x1 and f1 are scratch.
 * Counts its model evaluation in *n_evals. */
double nhb_rk_initial_step(nhb_instance *inst, const nhb_rk_method *m, double t, const double *x0, const double *f0,
                           double span, double *x1, double *f1, long *n_evals)
{
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, h0, h1, dmax;
    int i, n = NHB_NX;

    for (i = 0; i < n; i++) {
        double sk = error_scale(inst, i, x0[i], x0[i]);
        d0 += (x0[i] / sk) * (x0[i] / sk);
        d1 += (f0[i] / sk) * (f0[i] / sk);
    }
    d0 = sqrt(d0 / n);
    d1 = sqrt(d1 / n);
    h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h0 = fmin(h0, span);

    for (i = 0; i < n; i++)
        x1[i] = x0[i] + h0 * f0[i];
    ++*n_evals;
    if (nhb_eval_rhs(inst, t + h0, x1, f1, inst->lam_work))
        return h0; /* the step loop reduces h further if needed */
    for (i = 0; i < n; i++) {
        double sk = error_scale(inst, i, x0[i], x0[i]);
        d2 += ((f1[i] - f0[i]) / sk) * ((f1[i] - f0[i]) / sk);
    }
    d2 = sqrt(d2 / n) / h0;

    dmax = fmax(d1, d2);
    h1 = dmax <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / dmax, 1.0 / (m->error_order + 1));
    h1 = fmin(fmin(100.0 * h0, h1), span);
    /* |f| / scale beyond ~1e154 overflows the norms and gives 0: start at the smallest normal step */
    return h1 > 0.0 ? h1 : fmin(DBL_MIN, span);
}

/* Prepare the dense output of the accepted step of method mi from (t, x0) over h to x1, with the
 * stages k[0..s] (k[s] = f(t + h, x1)). DOP853 evaluates its three extra stages here (counted in
 * *n_evals; xs is scratch; their multipliers go to inst->lam, whose cache is cleared: the state at
 * the communication point is about to change); returns 1 if one of them fails (inst->msg says why). */
int nhb_rk_dense_prepare(nhb_instance *inst, int mi, double t, double h, const double *x0, const double *x1,
                         double *const *k, double *xs, long *n_evals)
{
    const int n = NHB_NX;
    double *d = inst->dense;
    int i, j, r;

    memcpy(d, x0, (size_t)n * sizeof(double));
    if (mi == NHB_RK_DOPRI5) {
        for (j = 0; j < 4; j++) {
            double w[7], *q = d + (size_t)(j + 1) * n;
            for (i = 0; i < 7; i++)
                w[i] = DP5_P[i][j];
            nhb_rk_combine(n, 7, w, k, q);
            for (r = 0; r < n; r++)
                q[r] *= h;
        }
    } else {
        double *f[4];
        for (i = 0; i < 3; i++) {
            const int s = 13 + i;
            nhb_rk_combine(n, s, DOP853_A_EXTRA[i], k, xs);
            for (r = 0; r < n; r++)
                xs[r] = x0[r] + h * xs[r];
            ++*n_evals;
            inst->rhs_valid = 0;
            if (nhb_eval_rhs(inst, t + DOP853_C_EXTRA[i] * h, xs, k[s], inst->lam))
                return 1;
        }
        for (r = 0; r < n; r++) {
            double dx = x1[r] - x0[r], bspl = h * k[0][r] - dx;
            d[n + r] = dx;
            d[2 * n + r] = bspl;
            d[3 * n + r] = dx - h * k[12][r] - bspl; /* = 2 dx - h (k12 + k0) */
        }
        for (j = 0; j < 4; j++) {
            f[j] = d + (size_t)(4 + j) * n;
            nhb_rk_combine(n, 16, DOP853_D[j], k, f[j]);
            for (r = 0; r < n; r++)
                f[j][r] *= h;
        }
    }
    inst->dense_t0 = t;
    inst->dense_h = h;
    inst->dense_method = mi;
    return 0;
}

/* x at time t inside the step of the dense output. */
void nhb_rk_dense_eval(const nhb_instance *inst, double t, double *x)
{
    const int n = NHB_NX;
    const double *d = inst->dense, s = (t - inst->dense_t0) / inst->dense_h, s1 = 1.0 - s;
    int r;

    if (inst->dense_method == NHB_RK_DOPRI5) {
        for (r = 0; r < n; r++)
            x[r] = d[r] + s * (d[n + r] + s * (d[2 * n + r] + s * (d[3 * n + r] + s * d[4 * n + r])));
    } else {
        for (r = 0; r < n; r++) {
            const double *c = d + r;
            x[r] =
                c[0] +
                s * (c[n] + s1 * (c[2 * n] +
                                  s * (c[3 * n] + s1 * (c[4 * n] + s * (c[5 * n] + s1 * (c[6 * n] + s * c[7 * n]))))));
        }
    }
}
