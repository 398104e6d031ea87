"""Fixtures shared by the test modules: the two Modelica compilers, each a skip with its install command where it
is missing."""

from __future__ import annotations

import pytest

from bridge.tools.pymoca import PYMOCA_MISSING
from bridge.tools.rumoca import RUMOCA_MISSING


@pytest.fixture
def rumoca():
    """The rumoca module; skip (with the install command) where it is missing."""
    return pytest.importorskip("rumoca", reason=RUMOCA_MISSING)


@pytest.fixture
def pymoca():
    """The pymoca module; skip (with the install command) where pymoca or casadi is missing."""
    pytest.importorskip("casadi", reason=PYMOCA_MISSING)
    return pytest.importorskip("pymoca", reason=PYMOCA_MISSING)
