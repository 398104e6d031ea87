"""Sphinx configuration of nhbridge's documentation (MyST pages, autodoc with numpydoc docstrings)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import bridge  # noqa: E402

project = "nhbridge"
author = "the nhbridge developers"
copyright = "the nhbridge developers"
release = version = bridge.__version__ if hasattr(bridge, "__version__") else "0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "compiler-defects/*.mo", "gallery/*/"]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

autodoc_typehints = "description"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": False}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False

html_theme = "alabaster"
html_title = "nhbridge"
html_static_path: list[str] = []
