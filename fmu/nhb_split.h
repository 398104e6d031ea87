/* nhbridge FMU runtime: re-partitioning of the velocities for the reduced methods (NHB_REPARTITION = 1).
 *
 * The continuous states are the coordinates q and NHB_NX - NHB_NQ independent-speed slots u. The current split
 * (which NHB_NRES velocities are dependent) is a discrete state of the instance (inst->split_dep, one flag per
 * coordinate); slot k holds der(q) of the k-th independent coordinate (increasing index). Every evaluation
 * partitions the generated full constraint matrix A(q, t) numerically (LU with partial pivoting of A_dep) and
 * projects the generated split-free equations M q'' = h onto the split (see fmu/README.md). The split's
 * event indicator is its health sigma_min(A_dep) / sigma_max(A) minus NHB_SPLIT_THRESHOLD; where it falls
 * through 0 the runtime chooses a new split as the native simulation does and re-initializes the slots from
 * the current velocities.
 */
#ifndef NHB_SPLIT_H
#define NHB_SPLIT_H

#include "nhb_core.h"

#define NHB_SPLIT_THRESHOLD      1e-3 /* bridge.simulation.simulate.SPLIT_THRESHOLD */
#define NHB_SPLIT_USABLE         1e-8 /* candidates at or below this health are skipped (choose_independent) */
#define NHB_SPLIT_GOOD           1e-2 /* bridge.model.mechanics.GOOD_SPLIT */
#define NHB_SPLIT_MAX_CANDIDATES 2000 /* bridge.model.mechanics.MAX_SPLIT_CANDIDATES */

/* Number of event indicators: the switched elements' and the split's. */
int nhb_indicator_count(void);

/* Workspace and the build-time split (NHB_DEPENDENT); 0, or 1 when out of memory. */
int nhb_part_init(nhb_instance *inst);
void nhb_part_release(nhb_instance *inst);
void nhb_part_reset(nhb_instance *inst);

/* 1 while the current split is the one of build time (the generated Jacobian's). */
int nhb_part_is_build(const nhb_instance *inst);

/* The speed slot whose start value der(q_coordinate) is (the build-time split's independent coordinates, in
 * increasing order), or -1. */
int nhb_part_start_slot(int coordinate);

/* dx = (q', u') at (t, x) in the current split. Returns 0, or 1 with inst->msg. */
int nhb_part_rhs(nhb_instance *inst, double t, const double *x, double *dx);

/* All velocities v, the outputs y and the velocity residuals r at (t, x). Returns 0, or 1 with inst->msg. */
int nhb_part_outputs(nhb_instance *inst, double t, const double *x, double *v, double *y, double *r);

/* The split's event indicator at (t, x): health - NHB_SPLIT_THRESHOLD. Returns 0, or 1 with inst->msg. */
int nhb_part_indicator(nhb_instance *inst, double t, const double *x, double *z);

/* A new split at (t, x) (the native choice) and the slots of x re-initialized from the velocities there.
 * Returns 0, or 1 with inst->msg (no regular split: the constraint rows that are dependent, named). */
int nhb_part_change(nhb_instance *inst, const char *func, double t, double *x);

#endif
