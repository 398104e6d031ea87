"""The examples in the docstrings of the public API run and print what they show.

The modules are those that define the names of ``bridge.__all__`` (found from the names, so a new public name's
module is tested too), the package itself, whose docstring walks through the whole pipeline, and the other modules
whose docstrings hold examples.
"""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

import bridge


def _defining_module(name: str) -> str:
    obj = getattr(bridge, name)
    if inspect.ismodule(obj):
        return obj.__name__
    return getattr(obj, "__module__", None) or type(obj).__module__


#: modules outside the public names whose docstrings hold examples
MORE_EXAMPLES = ("bridge.atomic", "bridge.control.feedback", "bridge.fmu.archive", "bridge.model.mechanics",
                 "bridge.derivation.numeric_model", "bridge.modelica.forms")


def _public_modules() -> list[str]:
    names = {_defining_module(name) for name in bridge.__all__} | set(MORE_EXAMPLES)
    return ["bridge", *sorted(names - {"bridge"})]


MODULES = _public_modules()

#: optional packages an example needs (the extras ``fmu`` and ``control``), like the other tests' skips
NEEDS = {"bridge": ("fmpy",), "bridge.linearization.model": ("control",), "bridge.control.feedback": ("control",)}


def _examples(obj) -> list[doctest.Example]:
    doc = inspect.getdoc(obj) or ""
    return doctest.DocTestParser().get_examples(doc)


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples_run(module_name):
    for package in NEEDS.get(module_name, ()):
        pytest.importorskip(package)
    module = importlib.import_module(module_name)
    results = doctest.testmod(module, optionflags=doctest.ELLIPSIS, report=True)
    assert results.failed == 0, f"{results.failed} of {results.attempted} examples of {module_name} failed (above)"


def test_every_public_name_has_an_example():
    package_examples = " ".join(example.source for example in _examples(bridge))
    missing = []
    for name in bridge.__all__:
        obj = getattr(bridge, name)
        own = _examples(type(obj) if name == "METHODS" else obj)
        if not own and f"bridge.{name}" not in package_examples:
            missing.append(name)
    assert not missing, f"public names without a runnable example: {', '.join(missing)}"


def test_examples_of_the_public_functions_are_counted():
    # the finder sees the examples, so a docstring whose examples were lost would show up as attempted == 0
    for module_name in ("bridge", "bridge.derivation.methods.base", "bridge.linearization.linearize"):
        module = importlib.import_module(module_name)
        tests = doctest.DocTestFinder().find(module)
        assert sum(len(t.examples) for t in tests) >= 5, module_name
