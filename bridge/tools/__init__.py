"""Running external programs on files and text: the one place nhbridge runs compilers and foreign code.

gcc and the cross compilers (:mod:`.gcc`) with the object cache of compiled objects (:mod:`.objects`); Rumoca
(:mod:`.rumoca`), pymoca with CasADi's IDAS (:mod:`.pymoca`) and OpenModelica's omc (:mod:`.openmodelica`) on
Modelica text; foreign FMU code in a child process (:mod:`.sandbox`). Every function takes file paths, commands
and text, never equations of motion, so this stage lies below everything that writes: :mod:`bridge.modelica` and
:mod:`bridge.fmu` write and call it to compile, :mod:`bridge.backends` chooses the text of an exported model each
compiler gets, and :mod:`bridge.validation` compares the runs.
"""
