"""Package attributes imported on first use (PEP 562), as scientific Python's ``lazy_loader.attach``.

The command line imports every stage's package to add its subcommands; a package whose public names come from
modules that load sympy, scipy or python-control makes ``nhbridge --help`` (and every command that needs none of
them) pay for those imports. Such a package names its public attributes with :func:`attach` instead of importing
them.

Examples
--------
In a package's ``__init__.py``:

>>> __getattr__ = attach("bridge.simulation", {"simulate": ["simulate"], "result": ["SimulationResult"]})
>>> __getattr__("SimulationResult").__name__
'SimulationResult'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from importlib import import_module
from typing import Any


def attach(package: str, submodules: Mapping[str, Sequence[str]]) -> Callable[[str], Any]:
    """Return a module ``__getattr__`` that imports ``package.<submodule>`` when one of its names is first read.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    submodules : mapping of str to sequence of str
        Submodule name -> the public names it defines.

    Returns
    -------
    callable
        ``__getattr__(name)``; a name not listed raises ``AttributeError`` as a module does.
    """
    owner = {name: sub for sub, names in submodules.items() for name in names}

    def __getattr__(name: str) -> Any:
        if name not in owner:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{owner[name]}"), name)

    return __getattr__


__all__ = ["attach"]
