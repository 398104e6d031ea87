/* nhbridge FMU runtime: instance logic shared by the FMI 2.0 and FMI 3.0 layers.
 *
 * The core owns the model data of one instance (time, states, parameters, inputs and cached
 * evaluations of the generated nhb_rhs()/nhb_outputs()), the value-reference table look-up, the
 * message logging, the adaptive Runge-Kutta integrators used by Co-Simulation (Dormand-Prince
 * 5(4) and DOP853, with their dense outputs) and the FMU state (get, set, serialize).
 *
 * The FMI layers (fmi2_runtime.c, fmi3_runtime.c) embed an nhb_instance as the FIRST member of
 * their own instance struct, check the FMI state machine (nhb_allowed) and translate arguments and
 * status codes. The core never includes an FMI header.
 */
#ifndef NHB_CORE_H
#define NHB_CORE_H

#include <stddef.h>

#include "nhb_model.h"

/* Status codes. The values are those of fmi2Status and fmi3Status for OK..Fatal. */
typedef enum {
    NHB_OK = 0,
    NHB_WARNING = 1,
    NHB_DISCARD = 2,
    NHB_ERROR = 3,
    NHB_FATAL = 4
} nhb_status;

/* Modes of the FMI state machines, as bit flags so that a set of modes is a mask. */
enum {
    NHB_MODE_INSTANTIATED = 1u << 0,
    NHB_MODE_INIT = 1u << 1,       /* Initialization Mode */
    NHB_MODE_EVENT = 1u << 2,      /* Event Mode (ME; FMI 3 CS only with eventModeUsed) */
    NHB_MODE_CONT = 1u << 3,       /* Continuous-Time Mode (ME) */
    NHB_MODE_STEP = 1u << 4,       /* Step Mode (FMI 3 CS) = stepComplete (FMI 2 CS) */
    NHB_MODE_TERMINATED = 1u << 5, /* after Terminate */
    NHB_MODE_ERROR = 1u << 6       /* after a failed evaluation or step: getters, Reset, Free only */
};
#define NHB_MODE_ANY 0x7Fu

/* Interface type of an instance. */
enum {
    NHB_ME = 0,
    NHB_CS = 1
};

/* Log categories (bit flags). Errors are always passed to the logger; warnings and debug
 * messages only when their category is enabled: all categories are enabled at instantiation with
 * loggingOn = true, none with loggingOn = false; SetDebugLogging switches the listed ones (or all
 * when none are listed) on or off. */
enum {
    NHB_LOG_ERROR = 1u << 0,   /* "logStatusError" */
    NHB_LOG_WARNING = 1u << 1, /* "logStatusWarning" */
    NHB_LOG_DEBUG = 1u << 2    /* "logDebug": integrator statistics per doStep, mode changes */
};
#define NHB_LOG_ALL 0x7u

/* Size of the message buffer handed to nhb_rhs()/nhb_outputs() and used for log messages. */
#define NHB_MSG_LEN 512

/* Defaults of the Co-Simulation integrator. */
#define NHB_DEFAULT_RTOL 1e-8     /* relative tolerance when none is given */
#define NHB_ATOL_FACTOR  1e-2     /* atol = rtol * NHB_ATOL_FACTOR */
#define NHB_MAX_STEPS    1000000L /* integration steps (accepted + rejected) per doStep */
/* stage vectors k[0..16) of the largest method: DOP853's 12 stages, the FSAL stage f(t + h, x_new) and the 3 stages
 * of its dense output */
#define NHB_RK_EXT_STAGES 16
#define NHB_WORK_VECTORS  (NHB_RK_EXT_STAGES + 2) /* k[1..16) (k[0] is fi), stage state, new state, scratch */
#define NHB_DENSE_VECTORS 8   /* coefficients of the continuous extension: x_old and 7 (DOP853) or 4 (DOPRI5) */
#define NHB_RK_MEASURE    8   /* accepted steps (with a carried-over step size) that measure a method's cost */
#define NHB_RK_RETRY      200 /* accepted steps after which the method not in use is measured again */
/* more switches than this within NHB_ZENO_WINDOW (relative to the experiment's span) are chattering, a Zeno
 * sequence: an error (as the native simulation) */
#define NHB_ZENO_EVENTS    50
#define NHB_ZENO_WINDOW    1e-9
#define NHB_EVENT_ITER_MAX 64 /* switches at one event instant before the mode iteration counts as stuck */

typedef struct nhb_instance nhb_instance;

/* Hands one finished message to the importer's logger; set by the FMI layer. */
typedef void (*nhb_log_fn)(const nhb_instance *inst, nhb_status status, const char *category, const char *message);

struct nhb_instance {
    /* identity, set by nhb_init() */
    char *name;                         /* instance name (copy) */
    int interface;                      /* NHB_ME or NHB_CS */
    unsigned mode;                      /* one NHB_MODE_* flag */
    void *(*alloc_mem)(size_t, size_t); /* calloc-like allocator */
    void (*free_mem)(void *);           /* matching free */
    nhb_log_fn log_fn;                  /* may be NULL: no logging */
    unsigned log_categories;            /* enabled NHB_LOG_* categories (debug logging) */

    /* experiment */
    double time; /* current time t */
    double start_time;
    double stop_time;
    int stop_time_defined;
    double rtol, atol; /* tolerances of the CS integrator */

    /* model data (all arrays have at least one element, even when the count is 0) */
    double *x;                /* states (NHB_NX) */
    double *p;                /* parameters (NHB_NP) */
    double *in;               /* inputs (NHB_NIN) */
    double *dx, *lam;         /* cached nhb_rhs() results, valid if rhs_valid */
    double *v, *y, *r;        /* cached nhb_outputs() results, valid if out_valid */
    int rhs_valid, out_valid; /* cache flags, cleared by every set */
    int split_sign;           /* reduced forms: sign of det(A_dep) of the build-time split at the
                                              first evaluation after initialization (0: not taken yet) */
    int *split_dep;           /* NHB_REPARTITION: the current split, 1 per dependent coordinate
                                              (NHB_NQ); nhb_split.c */
    int *split_ints;          /* its integer and double workspace */
    double *split_work;
    double *jac; /* Jacobian cache of nhb_jacobian.c, keyed by (t, x, p, in); NULL
                                              until the first directional derivative, freed by nhb_release */

    /* integrator workspace and memory (Co-Simulation) */
    double *work;     /* NHB_WORK_VECTORS * NHB_NX doubles: stages, states */
    double *lam_work; /* multipliers of the stage evaluations */

    /* integration point: the integrator may have stepped past the communication point (inst->time);
     * the state there comes from the continuous extension (dense output) of the step that covers it */
    double t_int;             /* time of the integration point (>= time when int_valid) */
    double *xi, *fi, *lam_i;  /* state, f(t_int, xi) and its multipliers (NX, NX, NLAM) */
    int int_valid;            /* 1: (t_int, xi, fi) continues the trajectory through (time, x);
                                              cleared by every set of states, parameters, inputs or time */
    double *dense;            /* NHB_DENSE_VECTORS * NX: dense output of the last step that
                                              ends past a communication point */
    double dense_t0, dense_h; /* that step: [dense_t0, dense_t0 + dense_h], ending at t_int */
    int dense_method;         /* its method (0: DOPRI5, 1: DOP853) */

    /* method choice */
    double h_next[2];               /* proposed step size per method (0: none): DOPRI5, DOP853 */
    double rk_evals[2], rk_span[2]; /* model evaluations and integrated time of the current cost
                                              measurement of each method (steps after it settled) */
    long rk_steps[2];               /* accepted steps in that measurement */
    long rk_age[2];                 /* accepted steps of the other method since the method was used */
    int rk_settled[2];              /* the step size has settled since the method (re)started:
                                              its steps count in the measurement */
    int rk_last;                    /* method of the latest step (-1: none yet) */

    /* switched elements (NHB_NSW > 0, see nhb_model.h) */
    int *modes;                           /* mode of each element: the discrete states (NHB_NSW) */
    double *sw_w, *sw_limit, *sw_grad;    /* nhb_switching results at the latest point (scratch) */
    double *ev_x, *ev_dx, *ev_lam, *ev_z; /* scratch of the event logic (NX, NX, NLAM, 2 NSW) */
    double *zeno;                         /* times of the latest NHB_ZENO_EVENTS switches (a ring) */
    long events;                          /* switches since initialization (also the ring's position) */

    void *states; /* FMU states handed out by this instance (GetFMUState,
                                              DeserializeFMUState) and not yet freed: a list that
                                              nhb_release frees, so none outlives FreeInstance */

    char msg[NHB_MSG_LEN]; /* message buffer for the model functions */
};

/* Life cycle ------------------------------------------------------------------------------------ */

/* Initialize *inst (allocated and zeroed by the caller): copy the name, allocate the arrays with
 * alloc_mem, check the model tables and load the start values (nhb_reset). Returns NHB_OK, or
 * NHB_ERROR after logging the reason (the caller must then call nhb_release and free inst). */
nhb_status nhb_init(nhb_instance *inst, const char *name, int interface, void *(*alloc_mem)(size_t, size_t),
                    void (*free_mem)(void *), nhb_log_fn log_fn, int logging_on);

/* Free what nhb_init allocated and every FMU state the instance handed out that was not freed yet
 * (safe on a partially initialized instance). */
void nhb_release(nhb_instance *inst);

/* Back to the state after instantiation: start values, time 0, default tolerance, mode
 * Instantiated. Logging settings are kept. */
void nhb_reset(nhb_instance *inst);

/* Logging --------------------------------------------------------------------------------------- */

#if defined(__GNUC__)
#define NHB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define NHB_PRINTF(a, b)
#endif

/* Format and log a message. The category follows from the status: NHB_ERROR/NHB_FATAL ->
 * logStatusError (always logged), NHB_WARNING/NHB_DISCARD -> logStatusWarning, NHB_OK -> logDebug. */
void nhb_log(const nhb_instance *inst, nhb_status status, const char *fmt, ...) NHB_PRINTF(3, 4);

/* Name of a log category flag, and the flag of a name (0 if unknown). */
const char *nhb_category_name(unsigned category);
unsigned nhb_category_flag(const char *name);

/* SetDebugLogging: switch the listed categories (all when n == 0) on or off. */
nhb_status nhb_set_debug_logging(nhb_instance *inst, const char *func, int logging_on, size_t n,
                                 const char *const categories[]);

/* Variables and model calls (also used by nhb_jacobian.c) ------------------------------------------ */

/* The variable with value reference vr: binary search in NHB_VARIABLES (sorted by vr, checked by
 * nhb_init). If there is none: log "<func>: unknown value reference <vr><where>", return NULL. */
const nhb_variable *nhb_find_variable(const nhb_instance *inst, const char *func, unsigned int vr, const char *where);

/* Name of a variable kind (NHB_STATE: "state", ...). */
const char *nhb_kind_name(int kind);

/* After a model function (its name in `function`) returned rc, with inst->msg cleared before the call:
 * terminate the message, and give a failure without a message one. Returns 1 if rc != 0, else 0. */
int nhb_model_failed(nhb_instance *inst, const char *function, int rc);

/* State machine --------------------------------------------------------------------------------- */

/* 1 if the current mode is in `allowed`, else log "<func>: not allowed in <mode>" and return 0. */
int nhb_allowed(const nhb_instance *inst, const char *func, unsigned allowed);

/* 1 if inst->interface == interface, else log and return 0. */
int nhb_interface_is(const nhb_instance *inst, const char *func, int interface);

/* Human-readable name of a mode flag. */
const char *nhb_mode_name(unsigned mode);

/* Log "<func>: argument <what> is NULL" and return NHB_ERROR. */
nhb_status nhb_null_argument(const nhb_instance *inst, const char *func, const char *what);

/* Experiment set-up and initialization ---------------------------------------------------------- */

/* Store tolerance, start and stop time; sets time = startTime. The tolerance must be finite with
 * 0 < tolerance < 1 (Error otherwise); below 100 eps it is raised to 100 eps with a warning. */
nhb_status nhb_setup_experiment(nhb_instance *inst, const char *func, int tolerance_defined, double tolerance,
                                double start_time, int stop_time_defined, double stop_time);

/* ExitInitializationMode: make the start state consistent with the constraints (the dependent
 * coordinates NHB_DEPENDENT of the build-time split computed from the others: positions by Newton on
 * the holonomic constraints, velocities by LU; see nhb_model.h), then evaluate the model once at the
 * initial point (so that bad parameters fail here, with the model's message, and not later inside an
 * integrator). On failure (Newton not converging, a singular matrix, a failed evaluation) the reason,
 * naming the constraint and its residual, is logged, the given state is kept and the mode becomes Error. */
nhb_status nhb_check_initial_point(nhb_instance *inst, const char *func);

/* Variable access ------------------------------------------------------------------------------- */

/* Get the Float64 (FMI 2: Real) variables vr[0..n). Evaluates the model if needed. */
nhb_status nhb_get_float64(nhb_instance *inst, const char *func, const unsigned int vr[], size_t n, double values[]);

/* Set Float64 variables, with the per-kind rules: states only in Instantiated/Initialization Mode,
 * parameters (tunable) also in Event/Step Mode, inputs in every mode but Terminated/Error; time and
 * computed quantities never. All references are checked before any value is changed. */
nhb_status nhb_set_float64(nhb_instance *inst, const char *func, const unsigned int vr[], size_t n,
                           const double values[]);

/* Get/Set for a type the model does not have (all variables are Float64): OK for n == 0, else an
 * error naming the first value reference. */
nhb_status nhb_no_variables_of_type(const nhb_instance *inst, const char *func, const unsigned int vr[], size_t n,
                                    const char *type_name);

/* Model Exchange -------------------------------------------------------------------------------- */

nhb_status nhb_set_time(nhb_instance *inst, const char *func, double t);
nhb_status nhb_set_states(nhb_instance *inst, const char *func, const double x[], size_t nx);
nhb_status nhb_get_states(nhb_instance *inst, const char *func, double x[], size_t nx);
nhb_status nhb_get_derivatives(nhb_instance *inst, const char *func, double dx[], size_t nx);
nhb_status nhb_get_nominals(nhb_instance *inst, const char *func, double nominals[], size_t nx);
nhb_status nhb_get_event_indicators(nhb_instance *inst, const char *func, double z[], size_t nz);

/* Event Mode (ME: NewDiscreteStates/UpdateDiscreteStates; FMI 3 CS with eventModeUsed): switch every
 * element whose event indicator is negative at the current point, as the native simulation does (the stick
 * test, the projection of the velocities on entering a held mode), until none is. *states_changed tells
 * whether a projection changed the continuous states. More than NHB_ZENO_EVENTS switches within
 * NHB_ZENO_WINDOW of the experiment's span is chattering (a Zeno sequence): an Error naming the element and
 * the time. Nothing to do without switched elements. */
nhb_status nhb_event_update(nhb_instance *inst, const char *func, int *states_changed);

/* CompletedIntegratorStep (ME): *enter_event_mode = 1 when an event indicator is negative at the current point
 * (a crossing the importer's root finder did not report, e.g. of an indicator that left 0 the wrong way). */
nhb_status nhb_completed_step(nhb_instance *inst, const char *func, int *enter_event_mode);

/* Co-Simulation --------------------------------------------------------------------------------- */

/* Advance from current_time to current_time + step (inputs held constant) with an adaptive explicit
 * Runge-Kutta method, Dormand-Prince 5(4) or DOP853, whichever needed fewer model evaluations per
 * unit time recently (see select_method in nhb_cosim.c). When nothing was set since the previous
 * doStep, the last step may end past the communication point (never past stopTime): the state at
 * the communication point is then the method's continuous extension (dense output), and a later
 * doStep whose end lies inside that step needs no model evaluation. Any set of a state, parameter,
 * input or time discards the part past the communication point. Models with switched elements
 * (NHB_NSW > 0) never step past the communication point: after every accepted step the event
 * indicators are checked, a sign change is located on the step's dense output (Illinois, to a few
 * ulps of t), and the event is handled there (nhb_event_update's logic) before the integration goes
 * on; with stop_at_event (FMI 3 CS with eventModeUsed and earlyReturnAllowed) the doStep returns at
 * the event instead, before handling it, with *stopped_at_event = 1 and inst->time the event time.
 * On failure the instance keeps the last accepted state and time (inst->time: the last successful
 * time) and the mode becomes Error. */
nhb_status nhb_do_step(nhb_instance *inst, const char *func, double current_time, double step, int stop_at_event,
                       int *stopped_at_event);

/* FMU state -------------------------------------------------------------------------------------- */

/* An FMU state is its own serialized form: a byte buffer (allocated with the instance's alloc_mem)
 * with a header (magic, format version, size, checksum, GUID, array sizes) followed by everything
 * that determines the future of the instance: mode, experiment (time, start/stop time,
 * tolerances), states, parameters, inputs, cached evaluations, the integration point with the
 * dense output of its step, and the step sizes and cost measurements of the method choice. Debug
 * logging settings are not part of it. The byte order is the platform's. */

/* GetFMUState: allocate a state (or overwrite *state when it is non-NULL, a state of this model)
 * and fill it with the current instance. A new state is entered in the instance's list
 * (inst->states): FreeFMUState takes it out, FreeInstance frees what is left. */
nhb_status nhb_state_get(nhb_instance *inst, const char *func, void **state);

/* SetFMUState: check the state (as DeserializeFMUState does) and copy it into the instance. The mode
 * recorded in it must be one of `allowed_modes`; a failing call changes nothing. */
nhb_status nhb_state_set(nhb_instance *inst, const char *func, const void *state, unsigned allowed_modes);

/* FreeFMUState: free *state (nothing if it is NULL) and set it to NULL. */
nhb_status nhb_state_free(nhb_instance *inst, const char *func, void **state);

/* SerializedFMUStateSize, SerializeFMUState (size: the buffer's, at least the state's size). */
nhb_status nhb_state_size(nhb_instance *inst, const char *func, const void *state, size_t *size);
nhb_status nhb_state_serialize(nhb_instance *inst, const char *func, const void *state, unsigned char *buffer,
                               size_t size);

/* DeserializeFMUState: check `size` bytes (size, magic, format version, checksum, GUID, array sizes,
 * and the range of every field: flags, modes, counters, finite numbers, a tolerance in range, times
 * not before the start time, an integration point and dense-output step consistent with the time,
 * cached results finite where they are marked valid) and copy them into a new state (or *state
 * when non-NULL). A checksum proves no integrity against a deliberate change, so the ranges are
 * what protects the instance. Errors are logged; a failing call changes nothing. */
nhb_status nhb_state_deserialize(nhb_instance *inst, const char *func, const unsigned char *buffer, size_t size,
                                 void **state);

#endif
