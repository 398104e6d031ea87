"""FMU export of the equations of motion.

One ``FmuLayout`` -> generated ``model.c`` and ``modelDescription.xml``, compiled with the fixed C runtime (top-level
``fmu/``, shipped as ``bridge.fmu.runtime``) into FMI 2.0/3.0 ME + CS FMUs. Rumoca and OpenModelica FMUs come from the
exported Modelica model (``backends``).
"""
