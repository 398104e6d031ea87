"""Packaging beyond pyproject.toml: the C runtime (top-level ``fmu/``) and the Modelica library (top-level
``modelica/``) ship inside the ``bridge`` package as ``bridge.fmu.runtime`` and ``bridge.modelica.library``,
found at run time through ``importlib.resources`` (wheel and editable installs alike)."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["bridge", "bridge.*"]), "bridge.fmu.runtime", "bridge.modelica.library"],
    package_dir={"bridge.fmu.runtime": "fmu", "bridge.modelica.library": "modelica"},
    package_data={
        "bridge": ["py.typed"],
        "bridge.fmu.runtime": ["*.c", "*.h", "README.md", "include/fmi2/*.h", "include/fmi3/*.h"],
        "bridge.animation": ["template.html", "vendor/three.module.min.js", "vendor/three.LICENSE"],
        "bridge.modelica.library": ["*/*.mo", "*/package.order", "*/*/*.mo", "*/*/package.order"],
    },
    include_package_data=False,
)
