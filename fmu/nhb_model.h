/* nhbridge FMU runtime <-> generated model contract.
 *
 * The generated file model.c (one per system) defines the macros and functions below; the fixed
 * runtime (the .c files in fmu/) implements the FMI 2.0 and FMI 3.0 APIs on top of them. Nothing in the runtime
 * knows about a particular system.
 *
 * States x = (q[0..NQ), u[0..NU_SPEEDS)): coordinates then speeds (all velocities for the
 * multiplier form, the independent velocities for reduced forms).
 */
#ifndef NHB_MODEL_H
#define NHB_MODEL_H

#include <stddef.h>

/* value-reference kinds */
enum nhb_kind {
    NHB_TIME = 0,   /* independent variable (only in FMI 3.0's variable list) */
    NHB_STATE,      /* x[index]                              continuous state */
    NHB_DERIVATIVE, /* dx[index]                             derivative of state index */
    NHB_PARAMETER,  /* p[index]                              tunable parameter */
    NHB_INPUT,      /* in[index]                             continuous input */
    NHB_VELOCITY,   /* v[index]  der(<coordinate>) when it is not a state (reduced forms) */
    NHB_OUTPUT,     /* y[index]                              output expression */
    NHB_MULTIPLIER, /* lam[index]                            lambda[k], efforts, element unknowns */
    NHB_RESIDUAL,   /* r[index]                              constraint residual */
    NHB_INDICATOR,  /* z[index]                              event indicator of switched element index */
    NHB_SWITCH_MODE /* modes[index]                          mode of switched element index (discrete) */
};

typedef struct {
    unsigned int vr; /* value reference */
    int kind;        /* enum nhb_kind */
    int index;       /* index into the array of that kind */
} nhb_variable;

/* Provided by the generated model.c ------------------------------------------------------------ */
extern const char *const NHB_MODEL_NAME;   /* modelIdentifier */
extern const char *const NHB_GUID;         /* instantiationToken / guid */
extern const int NHB_NX;                   /* number of states */
extern const int NHB_NQ;                   /* number of coordinates */
extern const int NHB_NP;                   /* parameters */
extern const int NHB_NIN;                  /* inputs */
extern const int NHB_NV;                   /* velocities der(q) (always NQ) */
extern const int NHB_NY;                   /* outputs */
extern const int NHB_NLAM;                 /* multipliers */
extern const int NHB_NRES;                 /* constraint residuals */
extern const int NHB_NVARS;                /* entries of NHB_VARIABLES */
extern const nhb_variable NHB_VARIABLES[]; /* sorted by vr */
extern const double NHB_X0[];              /* start values of the states */
extern const double NHB_NOMINALS[];        /* nominal magnitudes of the states (absolute tolerances scale with them) */
extern const double NHB_P0[];              /* default parameter values */
extern const double NHB_IN0[];             /* start values of the inputs */

/* Right-hand side dx = f(t, x) at parameters p, inputs in and the modes of the switched elements (NHB_NSW
 * entries, see below; the rows of the elements in these modes). Also fills lam (multipliers, then efforts,
 * then the unknowns of the switched elements; may be NULL when NHB_NLAM == 0). The mass-matrix system is
 * solved inside by LU with partial pivoting. Returns 0 on success; on failure (singular mass matrix,
 * non-finite values) returns nonzero and writes a NUL-terminated message of at most msg_len bytes into msg. */
int nhb_rhs(double t, const double *x, const double *p, const double *in, const int *modes, double *dx, double *lam,
            char *msg, size_t msg_len);

/* Algebraic quantities at a state: all velocities v (NHB_NV), outputs y (NHB_NY) and constraint
 * residuals r (NHB_NRES). lam is nhb_rhs's result at the same point when NHB_OUTPUTS_USE_LAM is 1 (outputs
 * that contain efforts), else NULL. Returns 0 on success, nonzero with a message otherwise. */
extern const int NHB_OUTPUTS_USE_LAM;
int nhb_outputs(double t, const double *x, const double *p, const double *in, const double *lam, double *v, double *y,
                double *r, char *msg, size_t msg_len);

/* Switched elements (Coulomb friction with stick and slip, diodes): NHB_NSW elements, each with an integer
 * mode, a discrete state of the instance, that selects its row of the dynamic system in nhb_rhs:
 *
 *   NHB_SW_FRICTION:     NHB_STICK (0): the relative velocity w is held (dw/dt = 0), the friction force F is
 *                        the unknown lam[NHB_SWITCH_UNKNOWN[k]], bounded by limit = mu_static N;
 *                        NHB_SLIP_POS (1) / NHB_SLIP_NEG (-1): F = -mu_kinetic N sign, w of that sign;
 *   NHB_SW_DIODE:        NHB_ON (1): v = V_f + R_on w (w = i - G_off V_f, i the current, v the voltage
 *                        lam[NHB_SWITCH_UNKNOWN[k]], limit = V_f); NHB_OFF (0): i = G_off v (G_off > 0);
 *   NHB_SW_IDEAL_DIODE:  as NHB_SW_DIODE with G_off = 0: blocking holds i at 0 (di/dt = 0).
 *
 * The runtime (nhb_switched.c) owns the switching logic, the same as the native simulation's
 * (bridge/simulation/events.py): event indicators positive while a mode holds, the stick test, and the
 * projection of the velocities onto w = 0 (least change along dw/dder(q)) on entering a held mode. Switched
 * elements need all velocities as states (NHB_VELOCITY_STATES = 1). */
enum nhb_switch_kind {
    NHB_SW_FRICTION = 0,
    NHB_SW_DIODE = 1,
    NHB_SW_IDEAL_DIODE = 2
};
enum nhb_switch_mode {
    NHB_SLIP_NEG = -1,
    NHB_STICK = 0,
    NHB_SLIP_POS = 1,
    NHB_OFF = 0,
    NHB_ON = 1
};
extern const int NHB_NSW;                    /* switched elements (event indicators) */
extern const int NHB_SWITCH_KIND[];          /* enum nhb_switch_kind, NHB_NSW entries */
extern const int NHB_SWITCH_UNKNOWN[];       /* index into lam of each element's unknown */
extern const char *const NHB_SWITCH_NAMES[]; /* names of the elements, for messages */

/* Switching quantities at a state: w (NHB_NSW: relative velocity of friction, i - G_off V_f of a diode),
 * limit (NHB_NSW: mu_static N of friction, V_f of a diode) and grad = dw/dder(q) (NHB_NSW x NHB_NQ,
 * row-major). Returns 0, or nonzero with a message (a stub that fails when NHB_NSW is 0). */
int nhb_switching(double t, const double *x, const double *p, const double *in, double *w, double *limit, double *grad,
                  char *msg, size_t msg_len);

/* Jacobian for the directional derivatives (fmu/nhb_jacobian.c). J (row-major) gets the partial
 * derivatives of the rows [dx (NHB_NX); lam (NHB_NLAM); y (NHB_NY)] with respect to the columns
 * [x (NHB_NX); in (NHB_NIN)] at (t, x); z = [dx[NHB_NQ..NHB_NX); lam] is nhb_rhs's result at the same
 * point (the multiplier form's unknowns, in which the derivatives of the mass matrix are contracted).
 * Returns 0, or nonzero with a message. NHB_HAS_JACOBIAN = 0: nhb_jacobian is a stub that fails (the
 * FMU does not provide directional derivatives). */
extern const int NHB_HAS_JACOBIAN;
int nhb_jacobian(double t, const double *x, const double *p, const double *in, const double *z, double *J, char *msg,
                 size_t msg_len);

/* Constraints, for consistent start values (nhb_start.c, at ExitInitializationMode). NHB_HAS_CONSTRAINTS = 0:
 * the model has none (NHB_NRES == 0), nothing is projected and nhb_constraints is a stub that fails. Else the
 * NHB_NRES constraints are, at velocity level, A(q, t) der(q) + a0(q, t) = 0, the first NHB_NHOL of them the
 * time derivatives of the holonomic constraints phi(q, t) = 0 (so their rows of A are d phi/dq).
 * NHB_DEPENDENT[0..NHB_NRES) are the coordinates (increasing indices) of the split chosen at build time:
 * their positions (Newton on phi = 0, when NHB_NHOL > 0) and, when NHB_VELOCITY_STATES = 1 (all
 * velocities are states, x[NHB_NQ + i] = der(q_i): the multiplier forms), their velocities are computed
 * from the others, which count as given. Reduced forms (NHB_VELOCITY_STATES = 0) carry the independent
 * speeds only; their dependent velocities satisfy the constraints by construction (NHB_REPARTITION = 0: solved from A_dep at every
 * evaluation by the generated code, which fails below a split health of 1e-3; the runtime also fails an
 * evaluation where det(A_dep) has changed its sign since the start: the split was passed over).
 * NHB_COORDINATE_NAMES (NHB_NQ) and NHB_CONSTRAINT_NAMES (NHB_NRES) name them in messages. */
extern const int NHB_HAS_CONSTRAINTS;
extern const int NHB_NHOL;
extern const int NHB_VELOCITY_STATES;
extern const int NHB_DEPENDENT[];
extern const char *const NHB_COORDINATE_NAMES[];
extern const char *const NHB_CONSTRAINT_NAMES[];

/* phi (NHB_NHOL), A (NHB_NRES x NHB_NQ, row-major) and a0 (NHB_NRES) at time t and the positions
 * x[0..NHB_NQ). Returns 0, or nonzero with a message. */
int nhb_constraints(double t, const double *x, const double *p, const double *in, double *phi, double *A, double *a0,
                    char *msg, size_t msg_len);

/* Split-free form of the reduced methods (fmu/nhb_split.c re-partitions with it). NHB_REPARTITION = 1: the states
 * x[NHB_NQ..NHB_NX) are independent-speed slots of the current split (at the start the build-time split's
 * independent coordinates); nhb_rhs, nhb_outputs and nhb_jacobian hold the build-time split only, and the runtime
 * evaluates from these instead. NHB_SPLIT_MAY_DEPEND (NHB_NQ): the method accepts the coordinate among the
 * dependent ones; NHB_SPLIT_CYCLIC (NHB_NQ): it appears only through its velocity (ranks the candidate splits).
 * NHB_REPARTITION = 0: the three functions are stubs that fail. Each returns 0, or nonzero with a message. */
extern const int NHB_REPARTITION;
extern const char *const NHB_SPLIT_METHOD; /* the method's name, for messages */
extern const int NHB_SPLIT_MAY_DEPEND[];
extern const int NHB_SPLIT_CYCLIC[];
/* A(q, t) (NHB_NRES x NHB_NQ, row-major, the rows of nhb_constraints) and a0(q, t) at the positions x[0..NHB_NQ). */
int nhb_split_constraints(double t, const double *x, const double *p, const double *in, double *A, double *a0,
                          char *msg, size_t msg_len);
/* At positions x[0..NHB_NQ) and all velocities v (NHB_NQ): M q'' = h (M: NHB_NQ x NHB_NQ, h: NHB_NQ) and the time
 * derivatives A' (NHB_NRES x NHB_NQ) and a0' (NHB_NRES) of the constraints along the motion. */
int nhb_split_dynamics(double t, const double *x, const double *v, const double *p, const double *in, double *M,
                       double *h, double *A_dot, double *a0_dot, char *msg, size_t msg_len);
/* The outputs y (NHB_NY) and velocity residuals r (NHB_NRES) at positions x[0..NHB_NQ) and velocities v. */
int nhb_split_outputs(double t, const double *x, const double *v, const double *p, const double *in, double *y,
                      double *r, char *msg, size_t msg_len);

/* Provided by the runtime (fmu/nhb_linalg.c) for the generated code -------------------------------- */
/* Solve A z = b in place (A: n x n row-major, overwritten by its LU factors; b: overwritten by z).
 * Partial pivoting. Returns 0, or k+1 when pivot k is (numerically) zero. */
int nhb_lu_solve(int n, double *A, double *b);

/* For the generated nhb_jacobian: solve A Z = B in place for nrhs right-hand sides with one LU
 * factorization (A: n x n row-major, overwritten; B: n x nrhs row-major, overwritten by Z). Same
 * elimination, pivoting and singularity test as nhb_lu_solve. Returns 0 or k+1 (pivot k zero). */
int nhb_lu_solve_many(int n, double *A, int nrhs, double *B);

#endif
