/* nhbridge FMU runtime: the FMI 3.0 API (Model Exchange and Co-Simulation in one binary).
 *
 * A thin layer over the core (nhb_core.h): argument and state-machine checks, status translation and the
 * FMI 3 logger. All variables are scalar Float64 (value reference 0 is the independent variable
 * time). FMU states can be got, set and serialized. Directional derivatives (nhb_jacobian.c) when the
 * model has the Jacobian code. Not provided (declared so in modelDescription.xml): Scheduled
 * Execution, adjoint derivatives, variable dependencies, clocks, structural parameters
 * (configuration mode), output derivatives, intermediate updates. Models with switched elements have one
 * event indicator per element: Model Exchange handles their events in fmi3UpdateDiscreteStates;
 * Co-Simulation locates them inside fmi3DoStep and handles them there, or, with eventModeUsed and
 * earlyReturnAllowed, returns early at the event (eventHandlingNeeded) for the importer's Event Mode.
 * Every function of fmi3FunctionTypes.h is defined and exported (those of clocks in fmi3_clocks.c); the
 * unsupported ones return fmi3Error with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmi3Functions.h"
#include "nhb_core.h"
#include "nhb_jacobian.h"
#include "nhb_split.h"

/* An FMI 3 instance: the core (first member, so that an fmi3Instance is also an nhb_instance*)
 * plus the importer's callbacks. */
typedef struct {
    nhb_instance core;
    fmi3InstanceEnvironment env;
    fmi3LogMessageCallback log_message;
    int event_mode_used;      /* Co-Simulation: eventModeUsed of fmi3InstantiateCoSimulation */
    int early_return_allowed; /* Co-Simulation: earlyReturnAllowed of fmi3InstantiateCoSimulation */
} fmi3_instance;

/* Sets of modes in which the functions may be called (FMI 3.0, state machines of 3.2 and 4.2). */
#define MODES_GET                                                                                                      \
    (NHB_MODE_INIT | NHB_MODE_EVENT | NHB_MODE_CONT | NHB_MODE_STEP | NHB_MODE_TERMINATED | NHB_MODE_ERROR)
#define MODES_SET       (NHB_MODE_INSTANTIATED | NHB_MODE_INIT | NHB_MODE_EVENT | NHB_MODE_CONT | NHB_MODE_STEP)
#define MODES_TERMINATE (NHB_MODE_EVENT | NHB_MODE_CONT | NHB_MODE_STEP)
#define MODES_ME_EVAL   (NHB_MODE_INIT | NHB_MODE_EVENT | NHB_MODE_CONT | NHB_MODE_TERMINATED | NHB_MODE_ERROR)
#define ANY_INTERFACE   (-1)

/* ---------------------------------------------------------------------------------------------- */
/* Helpers                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

static fmi3Status to_fmi3(nhb_status s)
{
    switch (s) {
    case NHB_OK: return fmi3OK;
    case NHB_WARNING: return fmi3Warning;
    case NHB_DISCARD: return fmi3Discard;
    case NHB_ERROR: return fmi3Error;
    default: return fmi3Fatal;
    }
}

/* nhb_log_fn of FMI 3 instances (the FMI 3 message is plain text, not a format string). */
static void log_fmi3(const nhb_instance *inst, nhb_status status, const char *category, const char *message)
{
    const fmi3_instance *w = (const fmi3_instance *)inst;
    if (w->log_message != NULL)
        w->log_message(w->env, to_fmi3(status), category, message);
}

/* The instance if it is non-NULL, of the given interface (or ANY_INTERFACE) and in one of the
 * allowed modes; otherwise NULL after logging why. */
static nhb_instance *begin(fmi3Instance instance, const char *func, unsigned allowed, int interface)
{
    nhb_instance *inst = (nhb_instance *)instance;
    if (inst == NULL)
        return NULL; /* nowhere to log to */
    if (interface != ANY_INTERFACE && !nhb_interface_is(inst, func, interface))
        return NULL;
    if (!nhb_allowed(inst, func, allowed))
        return NULL;
    return inst;
}

/* Log "<func>: not supported (<why>)" and return fmi3Error. */
static fmi3Status not_supported(fmi3Instance instance, const char *func, const char *why)
{
    if (instance != NULL)
        nhb_log((nhb_instance *)instance, NHB_ERROR, "%s: not supported (%s)", func, why);
    return fmi3Error;
}

/* The FMI 3 array-aware getters and setters: every variable is a scalar, so nValues must equal
 * nValueReferences. */
static int check_n_values(nhb_instance *inst, const char *func, size_t nValueReferences, size_t nValues)
{
    if (nValues == nValueReferences)
        return 1;
    nhb_log(inst, NHB_ERROR, "%s: nValues (%lu) must equal nValueReferences (%lu): all variables are scalars", func,
            (unsigned long)nValues, (unsigned long)nValueReferences);
    return 0;
}

/* Report a failure of an instantiate function (there is no instance yet to log through). */
static void log_instantiate_error(fmi3LogMessageCallback logMessage, fmi3InstanceEnvironment env, const char *func,
                                  const char *what)
{
    char buf[NHB_MSG_LEN];
    if (logMessage == NULL)
        return;
    snprintf(buf, sizeof buf, "%s: %s", func, what);
    logMessage(env, fmi3Error, "logStatusError", buf);
}

/* Common part of the two instantiate functions. Returns NULL after logging on failure. */
static fmi3_instance *instantiate(const char *func, fmi3String instanceName, fmi3String instantiationToken,
                                  int interface, fmi3Boolean loggingOn, fmi3InstanceEnvironment env,
                                  fmi3LogMessageCallback logMessage)
{
    fmi3_instance *w;

    if (instanceName == NULL || instanceName[0] == '\0') {
        log_instantiate_error(logMessage, env, func, "instanceName must be a non-empty string");
        return NULL;
    }
    if (instantiationToken == NULL || strcmp(instantiationToken, NHB_GUID) != 0) {
        log_instantiate_error(logMessage, env, func,
                              "the instantiationToken does not match the one of this "
                              "binary (modelDescription.xml and binary come from different exports)");
        return NULL;
    }
    w = (fmi3_instance *)calloc(1, sizeof *w);
    if (w == NULL) {
        log_instantiate_error(logMessage, env, func, "out of memory");
        return NULL;
    }
    w->env = env;
    w->log_message = logMessage;
    if (nhb_init(&w->core, instanceName, interface, calloc, free, log_fmi3, loggingOn) != NHB_OK) {
        if (w->core.name == NULL)
            log_instantiate_error(logMessage, env, func, "out of memory");
        nhb_release(&w->core);
        free(w);
        return NULL;
    }
    return w;
}

/* ---------------------------------------------------------------------------------------------- */
/* Common functions                                                                               */
/* ---------------------------------------------------------------------------------------------- */

const char *fmi3GetVersion(void)
{
    return fmi3Version;
}

fmi3Status fmi3SetDebugLogging(fmi3Instance instance, fmi3Boolean loggingOn, size_t nCategories,
                               const fmi3String categories[])
{
    nhb_instance *inst = begin(instance, "fmi3SetDebugLogging", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_set_debug_logging(inst, "fmi3SetDebugLogging", loggingOn, nCategories, categories));
}

fmi3Instance fmi3InstantiateModelExchange(fmi3String instanceName, fmi3String instantiationToken,
                                          fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                          fmi3InstanceEnvironment instanceEnvironment,
                                          fmi3LogMessageCallback logMessage)
{
    (void)resourcePath;
    (void)visible;
    return instantiate("fmi3InstantiateModelExchange", instanceName, instantiationToken, NHB_ME, loggingOn,
                       instanceEnvironment, logMessage);
}

fmi3Instance fmi3InstantiateCoSimulation(fmi3String instanceName, fmi3String instantiationToken,
                                         fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                         fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
                                         const fmi3ValueReference requiredIntermediateVariables[],
                                         size_t nRequiredIntermediateVariables,
                                         fmi3InstanceEnvironment instanceEnvironment, fmi3LogMessageCallback logMessage,
                                         fmi3IntermediateUpdateCallback intermediateUpdate)
{
    fmi3_instance *w;

    (void)resourcePath;
    (void)visible;
    (void)requiredIntermediateVariables;
    (void)nRequiredIntermediateVariables;
    (void)intermediateUpdate; /* not called: no intermediate updates (may be NULL) */
    w = instantiate("fmi3InstantiateCoSimulation", instanceName, instantiationToken, NHB_CS, loggingOn,
                    instanceEnvironment, logMessage);
    if (w != NULL) {
        w->event_mode_used = eventModeUsed;
        w->early_return_allowed = earlyReturnAllowed;
    }
    return w;
}

fmi3Instance fmi3InstantiateScheduledExecution(fmi3String instanceName, fmi3String instantiationToken,
                                               fmi3String resourcePath, fmi3Boolean visible, fmi3Boolean loggingOn,
                                               fmi3InstanceEnvironment instanceEnvironment,
                                               fmi3LogMessageCallback logMessage, fmi3ClockUpdateCallback clockUpdate,
                                               fmi3LockPreemptionCallback lockPreemption,
                                               fmi3UnlockPreemptionCallback unlockPreemption)
{
    (void)instanceName;
    (void)instantiationToken;
    (void)resourcePath;
    (void)visible;
    (void)loggingOn;
    (void)clockUpdate;
    (void)lockPreemption;
    (void)unlockPreemption;
    if (logMessage != NULL)
        logMessage(instanceEnvironment, fmi3Error, "logStatusError",
                   "fmi3InstantiateScheduledExecution: Scheduled Execution is not supported");
    return NULL;
}

void fmi3FreeInstance(fmi3Instance instance)
{
    fmi3_instance *w = (fmi3_instance *)instance;
    if (w == NULL)
        return;
    nhb_release(&w->core);
    free(w);
}

fmi3Status fmi3EnterInitializationMode(fmi3Instance instance, fmi3Boolean toleranceDefined, fmi3Float64 tolerance,
                                       fmi3Float64 startTime, fmi3Boolean stopTimeDefined, fmi3Float64 stopTime)
{
    nhb_instance *inst = begin(instance, "fmi3EnterInitializationMode", NHB_MODE_INSTANTIATED, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    if (nhb_setup_experiment(inst, "fmi3EnterInitializationMode", toleranceDefined, tolerance, startTime,
                             stopTimeDefined, stopTime) != NHB_OK)
        return fmi3Error;
    inst->mode = NHB_MODE_INIT;
    return fmi3OK;
}

fmi3Status fmi3ExitInitializationMode(fmi3Instance instance)
{
    nhb_instance *inst = begin(instance, "fmi3ExitInitializationMode", NHB_MODE_INIT, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    /* evaluate once at the start point: bad parameters fail here with the model's message */
    if (nhb_check_initial_point(inst, "fmi3ExitInitializationMode") != NHB_OK)
        return fmi3Error;
    if (inst->interface == NHB_ME || ((fmi3_instance *)instance)->event_mode_used)
        inst->mode = NHB_MODE_EVENT;
    else
        inst->mode = NHB_MODE_STEP;
    return fmi3OK;
}

fmi3Status fmi3EnterEventMode(fmi3Instance instance)
{
    nhb_instance *inst =
        begin(instance, "fmi3EnterEventMode", NHB_MODE_EVENT | NHB_MODE_CONT | NHB_MODE_STEP, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    if (inst->interface == NHB_CS && !((fmi3_instance *)instance)->event_mode_used) {
        nhb_log(inst, NHB_ERROR,
                "fmi3EnterEventMode: not allowed for a Co-Simulation instance with "
                "eventModeUsed = false");
        return fmi3Error;
    }
    inst->mode = NHB_MODE_EVENT;
    return fmi3OK;
}

fmi3Status fmi3Terminate(fmi3Instance instance)
{
    nhb_instance *inst = begin(instance, "fmi3Terminate", MODES_TERMINATE, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    inst->mode = NHB_MODE_TERMINATED;
    return fmi3OK;
}

fmi3Status fmi3Reset(fmi3Instance instance)
{
    nhb_instance *inst = begin(instance, "fmi3Reset", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    nhb_reset(inst);
    return fmi3OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Getting and setting variables                                                                  */
/* ---------------------------------------------------------------------------------------------- */

fmi3Status fmi3GetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                          fmi3Float64 values[], size_t nValues)
{
    nhb_instance *inst = begin(instance, "fmi3GetFloat64", MODES_GET, ANY_INTERFACE);
    if (inst == NULL || !check_n_values(inst, "fmi3GetFloat64", nValueReferences, nValues))
        return fmi3Error;
    return to_fmi3(nhb_get_float64(inst, "fmi3GetFloat64", valueReferences, nValueReferences, values));
}

fmi3Status fmi3SetFloat64(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                          const fmi3Float64 values[], size_t nValues)
{
    nhb_instance *inst = begin(instance, "fmi3SetFloat64", MODES_SET, ANY_INTERFACE);
    if (inst == NULL || !check_n_values(inst, "fmi3SetFloat64", nValueReferences, nValues))
        return fmi3Error;
    return to_fmi3(nhb_set_float64(inst, "fmi3SetFloat64", valueReferences, nValueReferences, values));
}

/* Getters and setters of the types the models do not have: fmi3OK for an empty request, otherwise
 * fmi3Error naming the value reference. Generated by macros because they differ only in the type. */
#define NO_VARIABLES_GETTER(NAME, TYPE)                                                                                \
    fmi3Status fmi3Get##NAME(fmi3Instance instance, const fmi3ValueReference valueReferences[],                        \
                             size_t nValueReferences, TYPE values[], size_t nValues)                                   \
    {                                                                                                                  \
        nhb_instance *inst = begin(instance, "fmi3Get" #NAME, MODES_GET, ANY_INTERFACE);                               \
        (void)values;                                                                                                  \
        if (inst == NULL || !check_n_values(inst, "fmi3Get" #NAME, nValueReferences, nValues))                         \
            return fmi3Error;                                                                                          \
        return to_fmi3(nhb_no_variables_of_type(inst, "fmi3Get" #NAME, valueReferences, nValueReferences, #NAME));     \
    }

#define NO_VARIABLES_SETTER(NAME, TYPE)                                                                                \
    fmi3Status fmi3Set##NAME(fmi3Instance instance, const fmi3ValueReference valueReferences[],                        \
                             size_t nValueReferences, const TYPE values[], size_t nValues)                             \
    {                                                                                                                  \
        nhb_instance *inst = begin(instance, "fmi3Set" #NAME, MODES_SET, ANY_INTERFACE);                               \
        (void)values;                                                                                                  \
        if (inst == NULL || !check_n_values(inst, "fmi3Set" #NAME, nValueReferences, nValues))                         \
            return fmi3Error;                                                                                          \
        return to_fmi3(nhb_no_variables_of_type(inst, "fmi3Set" #NAME, valueReferences, nValueReferences, #NAME));     \
    }

NO_VARIABLES_GETTER(Float32, fmi3Float32)
NO_VARIABLES_GETTER(Int8, fmi3Int8)
NO_VARIABLES_GETTER(UInt8, fmi3UInt8)
NO_VARIABLES_GETTER(Int16, fmi3Int16)
NO_VARIABLES_GETTER(UInt16, fmi3UInt16)
NO_VARIABLES_GETTER(Int32, fmi3Int32)
NO_VARIABLES_GETTER(UInt32, fmi3UInt32)
NO_VARIABLES_GETTER(Int64, fmi3Int64)
NO_VARIABLES_GETTER(UInt64, fmi3UInt64)
NO_VARIABLES_GETTER(Boolean, fmi3Boolean)
NO_VARIABLES_GETTER(String, fmi3String)

NO_VARIABLES_SETTER(Float32, fmi3Float32)
NO_VARIABLES_SETTER(Int8, fmi3Int8)
NO_VARIABLES_SETTER(UInt8, fmi3UInt8)
NO_VARIABLES_SETTER(Int16, fmi3Int16)
NO_VARIABLES_SETTER(UInt16, fmi3UInt16)
NO_VARIABLES_SETTER(Int32, fmi3Int32)
NO_VARIABLES_SETTER(UInt32, fmi3UInt32)
NO_VARIABLES_SETTER(Int64, fmi3Int64)
NO_VARIABLES_SETTER(UInt64, fmi3UInt64)
NO_VARIABLES_SETTER(Boolean, fmi3Boolean)
NO_VARIABLES_SETTER(String, fmi3String)

fmi3Status fmi3GetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                         size_t valueSizes[], fmi3Binary values[], size_t nValues)
{
    nhb_instance *inst = begin(instance, "fmi3GetBinary", MODES_GET, ANY_INTERFACE);
    (void)valueSizes;
    (void)values;
    if (inst == NULL || !check_n_values(inst, "fmi3GetBinary", nValueReferences, nValues))
        return fmi3Error;
    return to_fmi3(nhb_no_variables_of_type(inst, "fmi3GetBinary", valueReferences, nValueReferences, "Binary"));
}

fmi3Status fmi3SetBinary(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                         const size_t valueSizes[], const fmi3Binary values[], size_t nValues)
{
    nhb_instance *inst = begin(instance, "fmi3SetBinary", MODES_SET, ANY_INTERFACE);
    (void)valueSizes;
    (void)values;
    if (inst == NULL || !check_n_values(inst, "fmi3SetBinary", nValueReferences, nValues))
        return fmi3Error;
    return to_fmi3(nhb_no_variables_of_type(inst, "fmi3SetBinary", valueReferences, nValueReferences, "Binary"));
}

fmi3Status fmi3GetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                        fmi3Clock values[])
{
    nhb_instance *inst = begin(instance, "fmi3GetClock", MODES_GET, ANY_INTERFACE);
    (void)values;
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_no_variables_of_type(inst, "fmi3GetClock", valueReferences, nValueReferences, "Clock"));
}

fmi3Status fmi3SetClock(fmi3Instance instance, const fmi3ValueReference valueReferences[], size_t nValueReferences,
                        const fmi3Clock values[])
{
    nhb_instance *inst = begin(instance, "fmi3SetClock", MODES_SET, ANY_INTERFACE);
    (void)values;
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_no_variables_of_type(inst, "fmi3SetClock", valueReferences, nValueReferences, "Clock"));
}

/* ---------------------------------------------------------------------------------------------- */
/* FMU state; variable dependencies, partial derivatives, configuration: not provided             */
/* ---------------------------------------------------------------------------------------------- */

fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance instance, fmi3ValueReference valueReference,
                                               size_t *nDependencies)
{
    (void)valueReference;
    (void)nDependencies;
    return not_supported(instance, "fmi3GetNumberOfVariableDependencies", "providesPerElementDependencies = false");
}

fmi3Status fmi3GetVariableDependencies(fmi3Instance instance, fmi3ValueReference dependent,
                                       size_t elementIndicesOfDependent[], fmi3ValueReference independents[],
                                       size_t elementIndicesOfIndependents[], fmi3DependencyKind dependencyKinds[],
                                       size_t nDependencies)
{
    (void)dependent;
    (void)elementIndicesOfDependent;
    (void)independents;
    (void)elementIndicesOfIndependents;
    (void)dependencyKinds;
    (void)nDependencies;
    return not_supported(instance, "fmi3GetVariableDependencies", "providesPerElementDependencies = false");
}

/* FMU state (the state is its own serialized form, see nhb_core.h). A state may carry the modes an
 * instance of its interface can be in (Event Mode for Co-Simulation only with eventModeUsed). */
static unsigned state_modes(fmi3Instance instance)
{
    const nhb_instance *inst = (const nhb_instance *)instance;
    unsigned modes = NHB_MODE_INSTANTIATED | NHB_MODE_INIT | NHB_MODE_TERMINATED | NHB_MODE_ERROR;
    if (inst->interface == NHB_ME)
        return modes | NHB_MODE_EVENT | NHB_MODE_CONT;
    return modes | NHB_MODE_STEP | (((const fmi3_instance *)instance)->event_mode_used ? NHB_MODE_EVENT : 0u);
}

fmi3Status fmi3GetFMUState(fmi3Instance instance, fmi3FMUState *FMUState)
{
    nhb_instance *inst = begin(instance, "fmi3GetFMUState", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_state_get(inst, "fmi3GetFMUState", (void **)FMUState));
}

fmi3Status fmi3SetFMUState(fmi3Instance instance, fmi3FMUState FMUState)
{
    nhb_instance *inst = begin(instance, "fmi3SetFMUState", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_state_set(inst, "fmi3SetFMUState", FMUState, state_modes(instance)));
}

fmi3Status fmi3FreeFMUState(fmi3Instance instance, fmi3FMUState *FMUState)
{
    nhb_instance *inst = begin(instance, "fmi3FreeFMUState", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_state_free(inst, "fmi3FreeFMUState", (void **)FMUState));
}

fmi3Status fmi3SerializedFMUStateSize(fmi3Instance instance, fmi3FMUState FMUState, size_t *size)
{
    nhb_instance *inst = begin(instance, "fmi3SerializedFMUStateSize", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_state_size(inst, "fmi3SerializedFMUStateSize", FMUState, size));
}

fmi3Status fmi3SerializeFMUState(fmi3Instance instance, fmi3FMUState FMUState, fmi3Byte serializedState[], size_t size)
{
    nhb_instance *inst = begin(instance, "fmi3SerializeFMUState", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_state_serialize(inst, "fmi3SerializeFMUState", FMUState, serializedState, size));
}

fmi3Status fmi3DeserializeFMUState(fmi3Instance instance, const fmi3Byte serializedState[], size_t size,
                                   fmi3FMUState *FMUState)
{
    nhb_instance *inst = begin(instance, "fmi3DeserializeFMUState", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_state_deserialize(inst, "fmi3DeserializeFMUState", serializedState, size, FMUState));
}

fmi3Status fmi3GetDirectionalDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[], size_t nUnknowns,
                                        const fmi3ValueReference knowns[], size_t nKnowns, const fmi3Float64 seed[],
                                        size_t nSeed, fmi3Float64 sensitivity[], size_t nSensitivity)
{
    /* unknowns: derivatives, outputs (and multipliers, states); knowns: states, inputs (nhb_jacobian.c) */
    nhb_instance *inst = begin(instance, "fmi3GetDirectionalDerivative", MODES_GET, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    if (nSeed != nKnowns || nSensitivity != nUnknowns) {
        nhb_log(inst, NHB_ERROR,
                "fmi3GetDirectionalDerivative: nSeed (%lu) must equal nKnowns (%lu) and "
                "nSensitivity (%lu) nUnknowns (%lu): all variables are scalars",
                (unsigned long)nSeed, (unsigned long)nKnowns, (unsigned long)nSensitivity, (unsigned long)nUnknowns);
        return fmi3Error;
    }
    return to_fmi3(nhb_directional_derivative(inst, "fmi3GetDirectionalDerivative", unknowns, nUnknowns, knowns,
                                              nKnowns, seed, sensitivity));
}

fmi3Status fmi3GetAdjointDerivative(fmi3Instance instance, const fmi3ValueReference unknowns[], size_t nUnknowns,
                                    const fmi3ValueReference knowns[], size_t nKnowns, const fmi3Float64 seed[],
                                    size_t nSeed, fmi3Float64 sensitivity[], size_t nSensitivity)
{
    (void)unknowns;
    (void)nUnknowns;
    (void)knowns;
    (void)nKnowns;
    (void)seed;
    (void)nSeed;
    (void)sensitivity;
    (void)nSensitivity;
    return not_supported(instance, "fmi3GetAdjointDerivative", "providesAdjointDerivatives = false");
}

fmi3Status fmi3EnterConfigurationMode(fmi3Instance instance)
{
    return not_supported(instance, "fmi3EnterConfigurationMode", "the FMU has no structural parameters");
}

fmi3Status fmi3ExitConfigurationMode(fmi3Instance instance)
{
    return not_supported(instance, "fmi3ExitConfigurationMode", "the FMU has no structural parameters");
}

/* ---------------------------------------------------------------------------------------------- */
/* Discrete states and events: the modes of the switched elements                                   */
/* ---------------------------------------------------------------------------------------------- */

fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance instance)
{
    nhb_instance *inst = begin(instance, "fmi3EvaluateDiscreteStates", NHB_MODE_EVENT | NHB_MODE_STEP, ANY_INTERFACE);
    return inst == NULL ? fmi3Error : fmi3OK; /* no discrete states: nothing to evaluate */
}

fmi3Status fmi3UpdateDiscreteStates(fmi3Instance instance, fmi3Boolean *discreteStatesNeedUpdate,
                                    fmi3Boolean *terminateSimulation, fmi3Boolean *nominalsOfContinuousStatesChanged,
                                    fmi3Boolean *valuesOfContinuousStatesChanged, fmi3Boolean *nextEventTimeDefined,
                                    fmi3Float64 *nextEventTime)
{
    const char *func = "fmi3UpdateDiscreteStates";
    nhb_instance *inst = begin(instance, func, NHB_MODE_EVENT, ANY_INTERFACE);
    nhb_status status;
    int changed = 0;
    if (inst == NULL)
        return fmi3Error;
    if (!discreteStatesNeedUpdate || !terminateSimulation || !nominalsOfContinuousStatesChanged ||
        !valuesOfContinuousStatesChanged || !nextEventTimeDefined || !nextEventTime)
        return to_fmi3(nhb_null_argument(inst, func, "(one of the output flags)"));
    /* the switched elements whose indicators are negative switch here, all in one call (no time events) */
    status = nhb_event_update(inst, func, &changed);
    *discreteStatesNeedUpdate = fmi3False;
    *terminateSimulation = fmi3False;
    *nominalsOfContinuousStatesChanged = fmi3False;
    *valuesOfContinuousStatesChanged = changed ? fmi3True : fmi3False;
    *nextEventTimeDefined = fmi3False;
    *nextEventTime = 0.0;
    return to_fmi3(status);
}

/* ---------------------------------------------------------------------------------------------- */
/* Model Exchange                                                                                 */
/* ---------------------------------------------------------------------------------------------- */

fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance instance)
{
    nhb_instance *inst = begin(instance, "fmi3EnterContinuousTimeMode", NHB_MODE_EVENT, NHB_ME);
    if (inst == NULL)
        return fmi3Error;
    inst->mode = NHB_MODE_CONT;
    return fmi3OK;
}

fmi3Status fmi3CompletedIntegratorStep(fmi3Instance instance, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                       fmi3Boolean *enterEventMode, fmi3Boolean *terminateSimulation)
{
    nhb_instance *inst = begin(instance, "fmi3CompletedIntegratorStep", NHB_MODE_CONT, NHB_ME);
    (void)noSetFMUStatePriorToCurrentPoint;
    if (inst == NULL)
        return fmi3Error;
    if (enterEventMode == NULL)
        return to_fmi3(nhb_null_argument(inst, "fmi3CompletedIntegratorStep", "enterEventMode"));
    if (terminateSimulation == NULL)
        return to_fmi3(nhb_null_argument(inst, "fmi3CompletedIntegratorStep", "terminateSimulation"));
    {
        int due = 0;
        nhb_status status = nhb_completed_step(inst, "fmi3CompletedIntegratorStep", &due);
        *enterEventMode = due ? fmi3True : fmi3False;
        *terminateSimulation = fmi3False;
        return to_fmi3(status);
    }
}

fmi3Status fmi3SetTime(fmi3Instance instance, fmi3Float64 time)
{
    nhb_instance *inst = begin(instance, "fmi3SetTime", NHB_MODE_EVENT | NHB_MODE_CONT, NHB_ME);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_set_time(inst, "fmi3SetTime", time));
}

fmi3Status fmi3SetContinuousStates(fmi3Instance instance, const fmi3Float64 continuousStates[],
                                   size_t nContinuousStates)
{
    nhb_instance *inst = begin(instance, "fmi3SetContinuousStates", NHB_MODE_CONT, NHB_ME);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_set_states(inst, "fmi3SetContinuousStates", continuousStates, nContinuousStates));
}

fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance instance, fmi3Float64 derivatives[], size_t nContinuousStates)
{
    nhb_instance *inst = begin(instance, "fmi3GetContinuousStateDerivatives", MODES_ME_EVAL, NHB_ME);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_get_derivatives(inst, "fmi3GetContinuousStateDerivatives", derivatives, nContinuousStates));
}

fmi3Status fmi3GetEventIndicators(fmi3Instance instance, fmi3Float64 eventIndicators[], size_t nEventIndicators)
{
    nhb_instance *inst = begin(instance, "fmi3GetEventIndicators", MODES_ME_EVAL, NHB_ME);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_get_event_indicators(inst, "fmi3GetEventIndicators", eventIndicators, nEventIndicators));
}

fmi3Status fmi3GetContinuousStates(fmi3Instance instance, fmi3Float64 continuousStates[], size_t nContinuousStates)
{
    nhb_instance *inst = begin(instance, "fmi3GetContinuousStates", MODES_ME_EVAL, NHB_ME);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_get_states(inst, "fmi3GetContinuousStates", continuousStates, nContinuousStates));
}

fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance instance, fmi3Float64 nominals[], size_t nContinuousStates)
{
    nhb_instance *inst =
        begin(instance, "fmi3GetNominalsOfContinuousStates", NHB_MODE_INSTANTIATED | MODES_ME_EVAL, NHB_ME);
    if (inst == NULL)
        return fmi3Error;
    return to_fmi3(nhb_get_nominals(inst, "fmi3GetNominalsOfContinuousStates", nominals, nContinuousStates));
}

fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance instance, size_t *nEventIndicators)
{
    nhb_instance *inst = begin(instance, "fmi3GetNumberOfEventIndicators", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    if (nEventIndicators == NULL)
        return to_fmi3(nhb_null_argument(inst, "fmi3GetNumberOfEventIndicators", "nEventIndicators"));
    *nEventIndicators = (size_t)nhb_indicator_count();
    return fmi3OK;
}

fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance instance, size_t *nContinuousStates)
{
    nhb_instance *inst = begin(instance, "fmi3GetNumberOfContinuousStates", NHB_MODE_ANY, ANY_INTERFACE);
    if (inst == NULL)
        return fmi3Error;
    if (nContinuousStates == NULL)
        return to_fmi3(nhb_null_argument(inst, "fmi3GetNumberOfContinuousStates", "nContinuousStates"));
    *nContinuousStates = (size_t)NHB_NX;
    return fmi3OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Co-Simulation                                                                                  */
/* ---------------------------------------------------------------------------------------------- */

fmi3Status fmi3EnterStepMode(fmi3Instance instance)
{
    /* Event Mode of a Co-Simulation instance exists only with eventModeUsed = true */
    nhb_instance *inst = begin(instance, "fmi3EnterStepMode", NHB_MODE_EVENT, NHB_CS);
    if (inst == NULL)
        return fmi3Error;
    inst->mode = NHB_MODE_STEP;
    return fmi3OK;
}

fmi3Status fmi3GetOutputDerivatives(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                    size_t nValueReferences, const fmi3Int32 orders[], fmi3Float64 values[],
                                    size_t nValues)
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)orders;
    (void)values;
    (void)nValues;
    return not_supported(instance, "fmi3GetOutputDerivatives", "maxOutputDerivativeOrder = 0");
}

fmi3Status fmi3DoStep(fmi3Instance instance, fmi3Float64 currentCommunicationPoint, fmi3Float64 communicationStepSize,
                      fmi3Boolean noSetFMUStatePriorToCurrentPoint, fmi3Boolean *eventHandlingNeeded,
                      fmi3Boolean *terminateSimulation, fmi3Boolean *earlyReturn, fmi3Float64 *lastSuccessfulTime)
{
    const char *func = "fmi3DoStep";
    nhb_instance *inst = begin(instance, func, NHB_MODE_STEP, NHB_CS);
    nhb_status status;
    int stopped = 0, stop_at_event;

    (void)noSetFMUStatePriorToCurrentPoint;
    if (inst == NULL)
        return fmi3Error;
    if (!eventHandlingNeeded || !terminateSimulation || !earlyReturn || !lastSuccessfulTime)
        return to_fmi3(nhb_null_argument(inst, func, "(one of the output arguments)"));

    /* with Event Mode and early return the importer handles each event; else the FMU does, inside the step */
    stop_at_event = ((fmi3_instance *)instance)->event_mode_used && ((fmi3_instance *)instance)->early_return_allowed;
    status = nhb_do_step(inst, func, currentCommunicationPoint, communicationStepSize, stop_at_event, &stopped);
    *eventHandlingNeeded = stopped ? fmi3True : fmi3False;
    *terminateSimulation = fmi3False;
    *earlyReturn = stopped ? fmi3True : fmi3False;
    *lastSuccessfulTime = inst->time; /* on failure: the last accepted integration step; early: the event */
    return to_fmi3(status);
}
