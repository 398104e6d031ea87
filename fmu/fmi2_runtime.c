/* nhbridge FMU runtime: the FMI 2.0 API (Model Exchange and Co-Simulation in one binary).
 *
 * A thin layer over the core (nhb_core.h): argument and state-machine checks, status translation and the
 * FMI 2 logger. FMU states: canGetAndSetFMUstate = true, canSerializeFMUstate = true. Directional
 * derivatives (nhb_jacobian.c) when the model has the Jacobian code. Not provided (declared so in
 * modelDescription.xml): canInterpolateInputs = false, maxOutputDerivativeOrder = 0,
 * canRunAsynchronuously = false.
 * Models with switched elements (friction, diodes) have one event indicator per element: Model Exchange
 * handles their events in fmi2NewDiscreteStates, Co-Simulation locates and handles them inside fmi2DoStep.
 */
#include <stdlib.h>
#include <string.h>

#include "fmi2Functions.h"
#include "nhb_core.h"
#include "nhb_jacobian.h"

/* An FMI 2 instance: the core (first member, so that an fmi2Component is also an nhb_instance*)
 * plus the importer's callbacks. */
typedef struct {
    nhb_instance core;
    fmi2CallbackLogger logger;
    fmi2ComponentEnvironment env;
} fmi2_instance;

/* Sets of modes in which the functions may be called (FMI 2.0.4, tables in 3.2.3 and 4.2.4). */
#define MODES_GET                                                                                                      \
    (NHB_MODE_INIT | NHB_MODE_EVENT | NHB_MODE_CONT | NHB_MODE_STEP | NHB_MODE_TERMINATED | NHB_MODE_ERROR)
#define MODES_SET       (NHB_MODE_INSTANTIATED | NHB_MODE_INIT | NHB_MODE_EVENT | NHB_MODE_CONT | NHB_MODE_STEP)
#define MODES_TERMINATE (NHB_MODE_EVENT | NHB_MODE_CONT | NHB_MODE_STEP)
#define MODES_ME_EVAL   (NHB_MODE_INIT | NHB_MODE_EVENT | NHB_MODE_CONT | NHB_MODE_TERMINATED | NHB_MODE_ERROR)
#define MODES_CS_STATUS (NHB_MODE_STEP | NHB_MODE_TERMINATED | NHB_MODE_ERROR)
#define ANY_INTERFACE   (-1)

/* ---------------------------------------------------------------------------------------------- */
/* Helpers                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

static fmi2Status to_fmi2(nhb_status s)
{
    switch (s) {
    case NHB_OK: return fmi2OK;
    case NHB_WARNING: return fmi2Warning;
    case NHB_DISCARD: return fmi2Discard;
    case NHB_ERROR: return fmi2Error;
    default: return fmi2Fatal;
    }
}

/* Call the FMI 2 logger. Its message argument is a printf format string, so '%' is doubled. */
static void log_direct(fmi2CallbackLogger logger, fmi2ComponentEnvironment env, const char *instance_name,
                       fmi2Status status, const char *category, const char *message)
{
    char escaped[4 * NHB_MSG_LEN + 1];
    size_t i = 0;

    if (logger == NULL)
        return;
    for (; *message != '\0' && i + 2 < sizeof escaped; message++) {
        if (*message == '%')
            escaped[i++] = '%';
        escaped[i++] = *message;
    }
    escaped[i] = '\0';
    logger(env, instance_name ? instance_name : "", status, category, escaped);
}

/* nhb_log_fn of FMI 2 instances. */
static void log_fmi2(const nhb_instance *inst, nhb_status status, const char *category, const char *message)
{
    const fmi2_instance *w = (const fmi2_instance *)inst;
    log_direct(w->logger, w->env, inst->name, to_fmi2(status), category, message);
}

/* The instance behind c if it is non-NULL, of the given interface (or ANY_INTERFACE) and in one
 * of the allowed modes; otherwise NULL after logging why. */
static nhb_instance *begin(fmi2Component c, const char *func, unsigned allowed, int interface)
{
    nhb_instance *inst = (nhb_instance *)c;
    if (inst == NULL)
        return NULL; /* nowhere to log to */
    if (interface != ANY_INTERFACE && !nhb_interface_is(inst, func, interface))
        return NULL;
    if (!nhb_allowed(inst, func, allowed))
        return NULL;
    return inst;
}

/* Log "<func>: not supported (<why>)" and return fmi2Error. */
static fmi2Status not_supported(fmi2Component c, const char *func, const char *why)
{
    if (c != NULL)
        nhb_log((nhb_instance *)c, NHB_ERROR, "%s: not supported (%s)", func, why);
    return fmi2Error;
}

/* ---------------------------------------------------------------------------------------------- */
/* Common functions                                                                               */
/* ---------------------------------------------------------------------------------------------- */

const char *fmi2GetTypesPlatform(void)
{
    return fmi2TypesPlatform;
}

const char *fmi2GetVersion(void)
{
    return fmi2Version;
}

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean loggingOn, size_t nCategories,
                               const fmi2String categories[])
{
    nhb_instance *inst = begin(c, "fmi2SetDebugLogging", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_set_debug_logging(inst, "fmi2SetDebugLogging", loggingOn != fmi2False, nCategories, categories));
}

fmi2Component fmi2Instantiate(fmi2String instanceName, fmi2Type fmuType, fmi2String fmuGUID,
                              fmi2String fmuResourceLocation, const fmi2CallbackFunctions *functions,
                              fmi2Boolean visible, fmi2Boolean loggingOn)
{
    fmi2CallbackLogger logger;
    fmi2ComponentEnvironment env;
    void *(*alloc_mem)(size_t, size_t) = calloc;
    void (*free_mem)(void *) = free;
    fmi2_instance *w;

    (void)fmuResourceLocation; /* the runtime needs no resources */
    (void)visible;

    if (functions == NULL)
        return NULL; /* no logger to report to */
    logger = functions->logger;
    env = functions->componentEnvironment;
    if (functions->allocateMemory != NULL && functions->freeMemory != NULL) {
        alloc_mem = functions->allocateMemory;
        free_mem = functions->freeMemory;
    }

    if (instanceName == NULL || instanceName[0] == '\0') {
        log_direct(logger, env, "", fmi2Error, "logStatusError",
                   "fmi2Instantiate: instanceName must be a non-empty string");
        return NULL;
    }
    if (fmuGUID == NULL || strcmp(fmuGUID, NHB_GUID) != 0) {
        log_direct(logger, env, instanceName, fmi2Error, "logStatusError",
                   "fmi2Instantiate: the GUID does not match the one of this binary (modelDescription.xml "
                   "and binary come from different exports)");
        return NULL;
    }
    if (fmuType != fmi2ModelExchange && fmuType != fmi2CoSimulation) {
        log_direct(logger, env, instanceName, fmi2Error, "logStatusError",
                   "fmi2Instantiate: fmuType must be fmi2ModelExchange or fmi2CoSimulation");
        return NULL;
    }

    w = (fmi2_instance *)alloc_mem(1, sizeof *w);
    if (w == NULL) {
        log_direct(logger, env, instanceName, fmi2Error, "logStatusError", "fmi2Instantiate: out of memory");
        return NULL;
    }
    w->logger = logger;
    w->env = env;
    if (nhb_init(&w->core, instanceName, fmuType == fmi2ModelExchange ? NHB_ME : NHB_CS, alloc_mem, free_mem, log_fmi2,
                 loggingOn != fmi2False) != NHB_OK) {
        if (w->core.name == NULL)
            log_direct(logger, env, instanceName, fmi2Error, "logStatusError", "fmi2Instantiate: out of memory");
        nhb_release(&w->core);
        free_mem(w);
        return NULL;
    }
    return w;
}

void fmi2FreeInstance(fmi2Component c)
{
    fmi2_instance *w = (fmi2_instance *)c;
    void (*free_mem)(void *);

    if (w == NULL)
        return;
    free_mem = w->core.free_mem;
    nhb_release(&w->core);
    free_mem(w);
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance, fmi2Real startTime,
                               fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    nhb_instance *inst = begin(c, "fmi2SetupExperiment", NHB_MODE_INSTANTIATED, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_setup_experiment(inst, "fmi2SetupExperiment", toleranceDefined != fmi2False, tolerance,
                                        startTime, stopTimeDefined != fmi2False, stopTime));
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c)
{
    nhb_instance *inst = begin(c, "fmi2EnterInitializationMode", NHB_MODE_INSTANTIATED, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    inst->mode = NHB_MODE_INIT;
    return fmi2OK;
}

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    nhb_instance *inst = begin(c, "fmi2ExitInitializationMode", NHB_MODE_INIT, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    /* evaluate once at the start point: bad parameters fail here with the model's message */
    if (nhb_check_initial_point(inst, "fmi2ExitInitializationMode") != NHB_OK)
        return fmi2Error;
    inst->mode = inst->interface == NHB_ME ? NHB_MODE_EVENT : NHB_MODE_STEP;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c)
{
    nhb_instance *inst = begin(c, "fmi2Terminate", MODES_TERMINATE, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    inst->mode = NHB_MODE_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c)
{
    nhb_instance *inst = begin(c, "fmi2Reset", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    nhb_reset(inst);
    return fmi2OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Getting and setting variables                                                                  */
/* ---------------------------------------------------------------------------------------------- */

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{
    nhb_instance *inst = begin(c, "fmi2GetReal", MODES_GET, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_get_float64(inst, "fmi2GetReal", vr, nvr, value));
}

fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Integer value[])
{
    nhb_instance *inst = begin(c, "fmi2GetInteger", MODES_GET, ANY_INTERFACE);
    (void)value;
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_no_variables_of_type(inst, "fmi2GetInteger", vr, nvr, "Integer"));
}

fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Boolean value[])
{
    nhb_instance *inst = begin(c, "fmi2GetBoolean", MODES_GET, ANY_INTERFACE);
    (void)value;
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_no_variables_of_type(inst, "fmi2GetBoolean", vr, nvr, "Boolean"));
}

fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2String value[])
{
    nhb_instance *inst = begin(c, "fmi2GetString", MODES_GET, ANY_INTERFACE);
    (void)value;
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_no_variables_of_type(inst, "fmi2GetString", vr, nvr, "String"));
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[])
{
    nhb_instance *inst = begin(c, "fmi2SetReal", MODES_SET, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_set_float64(inst, "fmi2SetReal", vr, nvr, value));
}

fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Integer value[])
{
    nhb_instance *inst = begin(c, "fmi2SetInteger", MODES_SET, ANY_INTERFACE);
    (void)value;
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_no_variables_of_type(inst, "fmi2SetInteger", vr, nvr, "Integer"));
}

fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Boolean value[])
{
    nhb_instance *inst = begin(c, "fmi2SetBoolean", MODES_SET, ANY_INTERFACE);
    (void)value;
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_no_variables_of_type(inst, "fmi2SetBoolean", vr, nvr, "Boolean"));
}

fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2String value[])
{
    nhb_instance *inst = begin(c, "fmi2SetString", MODES_SET, ANY_INTERFACE);
    (void)value;
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_no_variables_of_type(inst, "fmi2SetString", vr, nvr, "String"));
}

/* ---------------------------------------------------------------------------------------------- */
/* FMU state (the state is its own serialized form, see nhb_core.h)                               */
/* ---------------------------------------------------------------------------------------------- */

/* Modes a state may carry when it is set into an instance of the given interface. */
static unsigned state_modes(const nhb_instance *inst)
{
    const unsigned common = NHB_MODE_INSTANTIATED | NHB_MODE_INIT | NHB_MODE_TERMINATED | NHB_MODE_ERROR;
    return common | (inst->interface == NHB_ME ? NHB_MODE_EVENT | NHB_MODE_CONT : NHB_MODE_STEP);
}

fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    nhb_instance *inst = begin(c, "fmi2GetFMUstate", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_state_get(inst, "fmi2GetFMUstate", (void **)FMUstate));
}

fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate FMUstate)
{
    nhb_instance *inst = begin(c, "fmi2SetFMUstate", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_state_set(inst, "fmi2SetFMUstate", FMUstate, state_modes(inst)));
}

fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *FMUstate)
{
    nhb_instance *inst = begin(c, "fmi2FreeFMUstate", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_state_free(inst, "fmi2FreeFMUstate", (void **)FMUstate));
}

fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate FMUstate, size_t *size)
{
    nhb_instance *inst = begin(c, "fmi2SerializedFMUstateSize", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_state_size(inst, "fmi2SerializedFMUstateSize", FMUstate, size));
}

fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate FMUstate, fmi2Byte serializedState[], size_t size)
{
    nhb_instance *inst = begin(c, "fmi2SerializeFMUstate", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(
        nhb_state_serialize(inst, "fmi2SerializeFMUstate", FMUstate, (unsigned char *)serializedState, size));
}

fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte serializedState[], size_t size,
                                   fmi2FMUstate *FMUstate)
{
    nhb_instance *inst = begin(c, "fmi2DeSerializeFMUstate", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_state_deserialize(inst, "fmi2DeSerializeFMUstate", (const unsigned char *)serializedState, size,
                                         (void **)FMUstate));
}

/* ---------------------------------------------------------------------------------------------- */
/* Partial derivatives                                                                            */
/* ---------------------------------------------------------------------------------------------- */

fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference vUnknown_ref[], size_t nUnknown,
                                        const fmi2ValueReference vKnown_ref[], size_t nKnown, const fmi2Real dvKnown[],
                                        fmi2Real dvUnknown[])
{
    /* unknowns: derivatives, outputs (and multipliers, states); knowns: states, inputs (nhb_jacobian.c) */
    nhb_instance *inst = begin(c, "fmi2GetDirectionalDerivative", MODES_GET, ANY_INTERFACE);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_directional_derivative(inst, "fmi2GetDirectionalDerivative", vUnknown_ref, nUnknown, vKnown_ref,
                                              nKnown, dvKnown, dvUnknown));
}

/* ---------------------------------------------------------------------------------------------- */
/* Model Exchange                                                                                 */
/* ---------------------------------------------------------------------------------------------- */

fmi2Status fmi2EnterEventMode(fmi2Component c)
{
    nhb_instance *inst = begin(c, "fmi2EnterEventMode", NHB_MODE_EVENT | NHB_MODE_CONT, NHB_ME);
    if (inst == NULL)
        return fmi2Error;
    inst->mode = NHB_MODE_EVENT;
    return fmi2OK;
}

fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *eventInfo)
{
    nhb_instance *inst = begin(c, "fmi2NewDiscreteStates", NHB_MODE_EVENT, NHB_ME);
    int changed = 0;
    nhb_status status;
    if (inst == NULL)
        return fmi2Error;
    if (eventInfo == NULL)
        return to_fmi2(nhb_null_argument(inst, "fmi2NewDiscreteStates", "eventInfo"));
    /* the switched elements whose indicators are negative switch here, all in one call (no time events) */
    status = nhb_event_update(inst, "fmi2NewDiscreteStates", &changed);
    eventInfo->newDiscreteStatesNeeded = fmi2False;
    eventInfo->terminateSimulation = fmi2False;
    eventInfo->nominalsOfContinuousStatesChanged = fmi2False;
    eventInfo->valuesOfContinuousStatesChanged = changed ? fmi2True : fmi2False;
    eventInfo->nextEventTimeDefined = fmi2False;
    eventInfo->nextEventTime = 0.0;
    return to_fmi2(status);
}

fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c)
{
    nhb_instance *inst = begin(c, "fmi2EnterContinuousTimeMode", NHB_MODE_EVENT, NHB_ME);
    if (inst == NULL)
        return fmi2Error;
    inst->mode = NHB_MODE_CONT;
    return fmi2OK;
}

fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation)
{
    nhb_instance *inst = begin(c, "fmi2CompletedIntegratorStep", NHB_MODE_CONT, NHB_ME);
    (void)noSetFMUStatePriorToCurrentPoint;
    if (inst == NULL)
        return fmi2Error;
    if (enterEventMode == NULL)
        return to_fmi2(nhb_null_argument(inst, "fmi2CompletedIntegratorStep", "enterEventMode"));
    if (terminateSimulation == NULL)
        return to_fmi2(nhb_null_argument(inst, "fmi2CompletedIntegratorStep", "terminateSimulation"));
    {
        int due = 0;
        nhb_status status = nhb_completed_step(inst, "fmi2CompletedIntegratorStep", &due);
        *enterEventMode = due ? fmi2True : fmi2False;
        *terminateSimulation = fmi2False;
        return to_fmi2(status);
    }
}

fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time)
{
    nhb_instance *inst = begin(c, "fmi2SetTime", NHB_MODE_EVENT | NHB_MODE_CONT, NHB_ME);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_set_time(inst, "fmi2SetTime", time));
}

fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t nx)
{
    nhb_instance *inst = begin(c, "fmi2SetContinuousStates", NHB_MODE_CONT, NHB_ME);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_set_states(inst, "fmi2SetContinuousStates", x, nx));
}

fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t nx)
{
    nhb_instance *inst = begin(c, "fmi2GetDerivatives", MODES_ME_EVAL, NHB_ME);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_get_derivatives(inst, "fmi2GetDerivatives", derivatives, nx));
}

fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real eventIndicators[], size_t ni)
{
    nhb_instance *inst = begin(c, "fmi2GetEventIndicators", MODES_ME_EVAL, NHB_ME);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_get_event_indicators(inst, "fmi2GetEventIndicators", eventIndicators, ni));
}

fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t nx)
{
    nhb_instance *inst = begin(c, "fmi2GetContinuousStates", MODES_ME_EVAL, NHB_ME);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_get_states(inst, "fmi2GetContinuousStates", x, nx));
}

fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x_nominal[], size_t nx)
{
    nhb_instance *inst = begin(c, "fmi2GetNominalsOfContinuousStates", NHB_MODE_INSTANTIATED | MODES_ME_EVAL, NHB_ME);
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_get_nominals(inst, "fmi2GetNominalsOfContinuousStates", x_nominal, nx));
}

/* ---------------------------------------------------------------------------------------------- */
/* Co-Simulation                                                                                  */
/* ---------------------------------------------------------------------------------------------- */

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[])
{
    (void)vr;
    (void)nvr;
    (void)order;
    (void)value;
    return not_supported(c, "fmi2SetRealInputDerivatives", "canInterpolateInputs = false");
}

fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                        const fmi2Integer order[], fmi2Real value[])
{
    (void)vr;
    (void)nvr;
    (void)order;
    (void)value;
    return not_supported(c, "fmi2GetRealOutputDerivatives", "maxOutputDerivativeOrder = 0");
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real currentCommunicationPoint, fmi2Real communicationStepSize,
                      fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    nhb_instance *inst = begin(c, "fmi2DoStep", NHB_MODE_STEP, NHB_CS);
    int stopped;
    (void)noSetFMUStatePriorToCurrentPoint;
    if (inst == NULL)
        return fmi2Error;
    return to_fmi2(nhb_do_step(inst, "fmi2DoStep", currentCommunicationPoint, communicationStepSize, 0, &stopped));
}

fmi2Status fmi2CancelStep(fmi2Component c)
{
    return not_supported(c, "fmi2CancelStep", "fmi2DoStep never returns fmi2Pending");
}

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value)
{
    (void)s;
    (void)value;
    return not_supported(c, "fmi2GetStatus", "fmi2DoStep never returns fmi2Pending");
}

fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value)
{
    nhb_instance *inst = begin(c, "fmi2GetRealStatus", MODES_CS_STATUS, NHB_CS);
    if (inst == NULL)
        return fmi2Error;
    if (value == NULL)
        return to_fmi2(nhb_null_argument(inst, "fmi2GetRealStatus", "value"));
    if (s != fmi2LastSuccessfulTime) {
        nhb_log(inst, NHB_ERROR, "fmi2GetRealStatus: only fmi2LastSuccessfulTime is available");
        return fmi2Error;
    }
    *value = inst->time; /* a failed doStep leaves time at the last accepted integration step */
    return fmi2OK;
}

fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value)
{
    (void)s;
    (void)value;
    return not_supported(c, "fmi2GetIntegerStatus", "there is no integer status");
}

fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value)
{
    nhb_instance *inst = begin(c, "fmi2GetBooleanStatus", MODES_CS_STATUS, NHB_CS);
    if (inst == NULL)
        return fmi2Error;
    if (value == NULL)
        return to_fmi2(nhb_null_argument(inst, "fmi2GetBooleanStatus", "value"));
    if (s != fmi2Terminated) {
        nhb_log(inst, NHB_ERROR, "fmi2GetBooleanStatus: only fmi2Terminated is available");
        return fmi2Error;
    }
    *value = fmi2False; /* the FMU never requests the end of the simulation */
    return fmi2OK;
}

fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{
    (void)s;
    (void)value;
    return not_supported(c, "fmi2GetStringStatus", "fmi2DoStep never returns fmi2Pending");
}
