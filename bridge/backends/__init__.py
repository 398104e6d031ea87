"""The other Modelica compilers as backends of nhbridge's exports.

Rumoca, pymoca and OpenModelica's omc given the Modelica that :mod:`bridge.modelica` writes for a set of equations
of motion: simulated (for :mod:`bridge.validation` to compare) or built into FMUs (``nhbridge fmu --backend``).
This stage chooses the texts and packs the results; the compilers themselves run in :mod:`bridge.tools`, which
takes text and file paths only.
"""
