"""The nhbridge FMU C runtime (FMI 2.0/3.0), shipped inside the wheel as ``bridge.fmu.runtime`` package data."""
