"""Validation: every run nhbridge can make (native methods, the Modelica model, FMUs) compared with the reference
(:mod:`.campaign`, ``nhbridge validate``), its reports (:mod:`.report`) and FMI Cross-Check folders
(:mod:`.crosscheck`, ``nhbridge crosscheck``). Nothing is imported here: ``bridge.validate`` is the entry point.
"""
