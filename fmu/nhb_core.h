/* nhbridge FMU runtime: instance logic shared by the FMI 2.0 and FMI 3.0 layers.
 *
 * The core owns the model data of one instance (time, states, parameters, inputs and cached
 * evaluations of the generated nhb_rhs()/nhb_outputs()), the value-reference table look-up, the
 * message logging and the adaptive Runge-Kutta integrators used by Co-Simulation (Dormand-Prince
 * 5(4) and DOP853).
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
enum { NHB_ME = 0, NHB_CS = 1 };

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
#define NHB_ATOL_FACTOR 1e-2      /* atol = rtol * NHB_ATOL_FACTOR */
#define NHB_MAX_STEPS 1000000L    /* integration steps (accepted + rejected) per doStep */
#define NHB_RK_MAX_STAGES 12      /* stages of the largest method (DOP853) */
#define NHB_WORK_VECTORS (NHB_RK_MAX_STAGES + 4) /* stages, FSAL stage, stage state, new state, scratch */
#define NHB_RK_RETRY 50           /* doSteps after which the method not in use is tried again */

typedef struct nhb_instance nhb_instance;

/* Hands one finished message to the importer's logger; set by the FMI layer. */
typedef void (*nhb_log_fn)(const nhb_instance *inst, nhb_status status, const char *category,
                           const char *message);

struct nhb_instance {
    /* identity, set by nhb_init() */
    char *name;                            /* instance name (copy) */
    int interface;                         /* NHB_ME or NHB_CS */
    unsigned mode;                         /* one NHB_MODE_* flag */
    void *(*alloc_mem)(size_t, size_t);    /* calloc-like allocator */
    void (*free_mem)(void *);              /* matching free */
    nhb_log_fn log_fn;                     /* may be NULL: no logging */
    unsigned log_categories;               /* enabled NHB_LOG_* categories (debug logging) */

    /* experiment */
    double time;                           /* current time t */
    double start_time;
    double stop_time;
    int stop_time_defined;
    double rtol, atol;                     /* tolerances of the CS integrator */

    /* model data (all arrays have at least one element, even when the count is 0) */
    double *x;                             /* states (NHB_NX) */
    double *p;                             /* parameters (NHB_NP) */
    double *in;                            /* inputs (NHB_NIN) */
    double *dx, *lam;                      /* cached nhb_rhs() results, valid if rhs_valid */
    double *v, *y, *r;                     /* cached nhb_outputs() results, valid if out_valid */
    int rhs_valid, out_valid;              /* cache flags, cleared by every set */

    /* integrator workspace and memory */
    double *work;                          /* NHB_WORK_VECTORS * NHB_NX doubles: stages, states */
    double *lam_work;                      /* multipliers of the stage evaluations */
    double h_next[2];                      /* proposed step size for the next doStep per method
                                              (0: none): DOPRI5, DOP853 */
    double rk_cost[2];                     /* model evaluations per unit time in the method's latest
                                              doStep (0: not measured) */
    long rk_age[2];                        /* doSteps since the method was last used */
    int rk_warm[2];                        /* rk_cost measured with a carried-over step size */

    char msg[NHB_MSG_LEN];                 /* message buffer for the model functions */
};

/* Life cycle ------------------------------------------------------------------------------------ */

/* Initialize *inst (allocated and zeroed by the caller): copy the name, allocate the arrays with
 * alloc_mem, check the model tables and load the start values (nhb_reset). Returns NHB_OK, or
 * NHB_ERROR after logging the reason (the caller must then call nhb_release and free inst). */
nhb_status nhb_init(nhb_instance *inst, const char *name, int interface, void *(*alloc_mem)(size_t, size_t),
                    void (*free_mem)(void *), nhb_log_fn log_fn, int logging_on);

/* Free what nhb_init allocated (safe on a partially initialized instance). */
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

/* Store tolerance, start and stop time; sets time = startTime. */
nhb_status nhb_setup_experiment(nhb_instance *inst, const char *func, int tolerance_defined,
                                double tolerance, double start_time, int stop_time_defined,
                                double stop_time);

/* Evaluate the model once at the initial point (so that bad parameters fail here, with the model's
 * message, and not later inside an integrator). On failure the mode becomes Error. */
nhb_status nhb_check_initial_point(nhb_instance *inst, const char *func);

/* Variable access ------------------------------------------------------------------------------- */

/* Get the Float64 (FMI 2: Real) variables vr[0..n). Evaluates the model if needed. */
nhb_status nhb_get_float64(nhb_instance *inst, const char *func, const unsigned int vr[], size_t n,
                           double values[]);

/* Set Float64 variables, with the per-kind rules: states only in Instantiated/Initialization Mode,
 * parameters (tunable) also in Event/Step Mode, inputs in every mode but Terminated/Error; time and
 * computed quantities never. All references are checked before any value is changed. */
nhb_status nhb_set_float64(nhb_instance *inst, const char *func, const unsigned int vr[], size_t n,
                           const double values[]);

/* Get/Set for a type the model does not have (all variables are Float64): OK for n == 0, else an
 * error naming the first value reference. */
nhb_status nhb_no_variables_of_type(const nhb_instance *inst, const char *func, const unsigned int vr[],
                                    size_t n, const char *type_name);

/* Model Exchange -------------------------------------------------------------------------------- */

nhb_status nhb_set_time(nhb_instance *inst, const char *func, double t);
nhb_status nhb_set_states(nhb_instance *inst, const char *func, const double x[], size_t nx);
nhb_status nhb_get_states(nhb_instance *inst, const char *func, double x[], size_t nx);
nhb_status nhb_get_derivatives(nhb_instance *inst, const char *func, double dx[], size_t nx);
nhb_status nhb_get_nominals(nhb_instance *inst, const char *func, double nominals[], size_t nx);
nhb_status nhb_get_event_indicators(nhb_instance *inst, const char *func, double z[], size_t nz);

/* Co-Simulation --------------------------------------------------------------------------------- */

/* Integrate from current_time over step (inputs held constant) with an adaptive explicit
 * Runge-Kutta method, Dormand-Prince 5(4) or DOP853, whichever needed fewer model evaluations per
 * unit time recently (see select_method in nhb_core.c), and land exactly on current_time + step.
 * On failure the instance keeps the last accepted state and time (see inst->time for the last
 * successful time) and the mode becomes Error. On success the last stage, f(t, x) at the new
 * point, is kept as the cached state derivative (and first stage of the next doStep). */
nhb_status nhb_do_step(nhb_instance *inst, const char *func, double current_time, double step);

#endif
