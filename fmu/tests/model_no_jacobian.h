/* The Jacobian, constraint and switching parts of the model contract (nhb_model.h) for the hand-written test
 * models, which have no Jacobian code, no constraints and no switched elements: NHB_HAS_JACOBIAN = 0, and
 * nhb_jacobian fails, so that the runtime's directional derivatives report "not supported";
 * NHB_HAS_CONSTRAINTS = 0 (nothing to make consistent at initialization), and nhb_constraints fails;
 * NHB_NSW = 0 (no event indicators), and nhb_switching fails; outputs without efforts (NHB_OUTPUTS_USE_LAM = 0).
 * Include it in the one model file of a binary.
 */
#ifndef NHB_MODEL_NO_JACOBIAN_H
#define NHB_MODEL_NO_JACOBIAN_H

#include <stdio.h>

#include "nhb_model.h"

const int NHB_HAS_JACOBIAN = 0;

int nhb_jacobian(double t, const double *x, const double *p, const double *in, const double *z, double *J,
                 char *msg, size_t msg_len)
{
    (void)t;
    (void)x;
    (void)p;
    (void)in;
    (void)z;
    (void)J;
    snprintf(msg, msg_len, "no Jacobian code");
    return 1;
}

const int NHB_HAS_CONSTRAINTS = 0;
const int NHB_NHOL = 0;
const int NHB_VELOCITY_STATES = 0;
const int NHB_DEPENDENT[] = {0};
const char *const NHB_COORDINATE_NAMES[] = {""};
const char *const NHB_CONSTRAINT_NAMES[] = {""};

int nhb_constraints(double t, const double *x, const double *p, const double *in, double *phi, double *A,
                    double *a0, char *msg, size_t msg_len)
{
    (void)t;
    (void)x;
    (void)p;
    (void)in;
    (void)phi;
    (void)A;
    (void)a0;
    snprintf(msg, msg_len, "no constraints");
    return 1;
}

const int NHB_OUTPUTS_USE_LAM = 0;
const int NHB_NSW = 0;
const int NHB_SWITCH_KIND[] = {0};
const int NHB_SWITCH_UNKNOWN[] = {0};
const char *const NHB_SWITCH_NAMES[] = {""};

int nhb_switching(double t, const double *x, const double *p, const double *in, double *w, double *limit,
                  double *grad, char *msg, size_t msg_len)
{
    (void)t;
    (void)x;
    (void)p;
    (void)in;
    (void)w;
    (void)limit;
    (void)grad;
    snprintf(msg, msg_len, "no switched elements");
    return 1;
}

const int NHB_REPARTITION = 0;
const char *const NHB_SPLIT_METHOD = "";
const int NHB_SPLIT_MAY_DEPEND[] = {0};
const int NHB_SPLIT_CYCLIC[] = {0};

int nhb_split_constraints(double t, const double *x, const double *p, const double *in, double *A, double *a0,
                          char *msg, size_t msg_len)
{
    (void)t, (void)x, (void)p, (void)in, (void)A, (void)a0;
    snprintf(msg, msg_len, "no re-partitioning");
    return 1;
}

int nhb_split_dynamics(double t, const double *x, const double *v, const double *p, const double *in, double *M,
                       double *h, double *A_dot, double *a0_dot, char *msg, size_t msg_len)
{
    (void)t, (void)x, (void)v, (void)p, (void)in, (void)M, (void)h, (void)A_dot, (void)a0_dot;
    snprintf(msg, msg_len, "no re-partitioning");
    return 1;
}

int nhb_split_outputs(double t, const double *x, const double *v, const double *p, const double *in, double *y,
                      double *r, char *msg, size_t msg_len)
{
    (void)t, (void)x, (void)v, (void)p, (void)in, (void)y, (void)r;
    snprintf(msg, msg_len, "no re-partitioning");
    return 1;
}

#endif
