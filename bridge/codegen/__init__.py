"""What every code writer shares.

Number literals, the checked printer base, string escapes, and the C printer with its CSE blocks, arrays and
names. Below :mod:`bridge.modelica` and :mod:`bridge.fmu`, which only write.
"""
