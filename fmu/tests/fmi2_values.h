/* One Float64 value at a time through the FMI 2 API, for the C test programs: get2 gives NaN when
 * fmi2GetReal fails, set2 returns fmi2SetReal's status.
 */
#ifndef NHB_TEST_FMI2_VALUES_H
#define NHB_TEST_FMI2_VALUES_H

#include <math.h>

#include "fmi2Functions.h"

static double get2(fmi2Component c, unsigned int vr)
{
    double v = NAN;
    fmi2ValueReference r = vr;
    if (fmi2GetReal(c, &r, 1, &v) != fmi2OK)
        return NAN;
    return v;
}

static fmi2Status set2(fmi2Component c, unsigned int vr, double value)
{
    fmi2ValueReference r = vr;
    return fmi2SetReal(c, &r, 1, &value);
}

#endif
