/* nhbridge FMU runtime: the FMI 3.0 functions of clocks and Scheduled Execution, which the FMUs do not
 * provide (modelDescription.xml declares no clocks): each returns fmi3Error with a message. */
#include "fmi3Functions.h"
#include "nhb_core.h"

/* Log "<func>: not supported (<why>)" and return fmi3Error. */
static fmi3Status no_clocks(fmi3Instance instance, const char *func, const char *why)
{
    if (instance != NULL)
        nhb_log((nhb_instance *)instance, NHB_ERROR, "%s: not supported (%s)", func, why);
    return fmi3Error;
}

fmi3Status fmi3GetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                  size_t nValueReferences, fmi3Float64 intervals[], fmi3IntervalQualifier qualifiers[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)intervals;
    (void)qualifiers;
    return no_clocks(instance, "fmi3GetIntervalDecimal", "the FMU has no clocks");
}

fmi3Status fmi3GetIntervalFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences, fmi3UInt64 counters[], fmi3UInt64 resolutions[],
                                   fmi3IntervalQualifier qualifiers[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)counters;
    (void)resolutions;
    (void)qualifiers;
    return no_clocks(instance, "fmi3GetIntervalFraction", "the FMU has no clocks");
}

fmi3Status fmi3GetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                               size_t nValueReferences, fmi3Float64 shifts[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)shifts;
    return no_clocks(instance, "fmi3GetShiftDecimal", "the FMU has no clocks");
}

fmi3Status fmi3GetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                size_t nValueReferences, fmi3UInt64 counters[], fmi3UInt64 resolutions[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)counters;
    (void)resolutions;
    return no_clocks(instance, "fmi3GetShiftFraction", "the FMU has no clocks");
}

fmi3Status fmi3SetIntervalDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                  size_t nValueReferences, const fmi3Float64 intervals[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)intervals;
    return no_clocks(instance, "fmi3SetIntervalDecimal", "the FMU has no clocks");
}

fmi3Status fmi3SetIntervalFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                   size_t nValueReferences, const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)counters;
    (void)resolutions;
    return no_clocks(instance, "fmi3SetIntervalFraction", "the FMU has no clocks");
}

fmi3Status fmi3SetShiftDecimal(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                               size_t nValueReferences, const fmi3Float64 shifts[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)shifts;
    return no_clocks(instance, "fmi3SetShiftDecimal", "the FMU has no clocks");
}

fmi3Status fmi3SetShiftFraction(fmi3Instance instance, const fmi3ValueReference valueReferences[],
                                size_t nValueReferences, const fmi3UInt64 counters[], const fmi3UInt64 resolutions[])
{
    (void)valueReferences;
    (void)nValueReferences;
    (void)counters;
    (void)resolutions;
    return no_clocks(instance, "fmi3SetShiftFraction", "the FMU has no clocks");
}

fmi3Status fmi3ActivateModelPartition(fmi3Instance instance, fmi3ValueReference clockReference,
                                      fmi3Float64 activationTime)
{
    (void)clockReference;
    (void)activationTime;
    return no_clocks(instance, "fmi3ActivateModelPartition", "Scheduled Execution is not supported");
}
