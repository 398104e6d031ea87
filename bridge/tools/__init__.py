"""Running external tools on what nhbridge writes.

Rumoca, pymoca (CasADi/IDAS) and OpenModelica's omc on the exported Modelica, the FMU builds through those
compilers, and foreign FMU code in a child process (the sandbox). :mod:`bridge.modelica` and
:mod:`bridge.fmu` write; this stage runs; :mod:`bridge.validation`
compares the runs with the native simulation.
"""
