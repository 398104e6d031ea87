/* nhbridge FMU runtime: directional derivatives (FMI 2 fmi2GetDirectionalDerivative, FMI 3
 * fmi3GetDirectionalDerivative) from the generated Jacobian (nhb_jacobian in model.c).
 *
 * Unknowns: state derivatives (kinds DERIVATIVE; VELOCITY, the derivatives of the dependent
 * coordinates of the reduced methods; STATE, whose value is its own row of the identity, which for
 * der(q) is also the derivative of q), outputs and multipliers. Knowns: states and inputs.
 */
#ifndef NHB_JACOBIAN_H
#define NHB_JACOBIAN_H

#include <stddef.h>

#include "nhb_core.h"

/* sensitivity[i] = sum_j d unknowns[i] / d knowns[j] * seed[j] at the current point (terms with
 * seed[j] == 0 are skipped). All value references are checked before anything is evaluated (a wrong
 * one: NHB_ERROR with a message, the instance unchanged). The Jacobian is evaluated once per point
 * and cached until the time, a state, a parameter or an input changes. A failing nhb_rhs is handled
 * as in every getter (logged, Error mode); a failing nhb_jacobian or a non-finite partial derivative
 * with a nonzero seed returns NHB_ERROR with a message but leaves the instance usable. NHB_ERROR
 * "not supported" when the model has no Jacobian code (NHB_HAS_JACOBIAN == 0). */
nhb_status nhb_directional_derivative(nhb_instance *inst, const char *func, const unsigned int unknowns[],
                                      size_t n_unknowns, const unsigned int knowns[], size_t n_knowns,
                                      const double seed[], double sensitivity[]);

#endif
