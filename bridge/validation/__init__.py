"""Validation of every run nhbridge can make against a reference.

Native methods, the Modelica model and FMUs are compared with the reference (:mod:`.campaign`, ``nhbridge validate``),
with reports (:mod:`.report`) and FMI Cross-Check folders (:mod:`.crosscheck`, ``nhbridge crosscheck``). Nothing is
imported here: ``bridge.validate`` is the entry point.
"""
