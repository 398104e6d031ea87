"""Running the external tools on what nhbridge writes: Rumoca, pymoca (CasADi/IDAS) and OpenModelica's omc on the
exported Modelica, and the FMU builds through those compilers. :mod:`bridge.modelica` and :mod:`bridge.fmu`
write; this stage runs; :mod:`bridge.validation` compares the runs with the native simulation."""
