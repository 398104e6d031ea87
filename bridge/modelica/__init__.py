"""Modelica export: the printer, the model and package writer, and the checks by Rumoca and OpenModelica.

The Modelica library generated from ``examples/`` (top-level ``modelica/``) ships as ``bridge.modelica.library``.
"""
