"""The Modelica library generated from ``examples/``, shipped inside the wheel as ``bridge.modelica.library``."""
