/* The Jacobian part of the model contract (nhb_model.h) for the hand-written test models, which have
 * no Jacobian code: NHB_HAS_JACOBIAN = 0, and nhb_jacobian fails, so that the runtime's directional
 * derivatives report "not supported". It defines both: include it in the one model file of a binary.
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

#endif
