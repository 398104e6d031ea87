"""The documentation: the Sphinx site builds with warnings as errors, the API reference covers ``bridge.__all__``,
the README stays a first page, and no page speaks of the project's history instead of its use."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import bridge

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

pytest.importorskip("sphinx", reason="the documentation build needs Sphinx: pip install -e '.[docs]'")
pytest.importorskip("myst_parser", reason="the documentation build needs MyST: pip install -e '.[docs]'")


# About 7 s of CPU, once per module: the Sphinx build with warnings as errors is the check.
@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The HTML site, built once with warnings as errors (a broken reference or docstring fails it)."""
    out = tmp_path_factory.mktemp("html")
    run = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                          "-d", str(out / ".doctrees"), str(DOCS), str(out)],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert run.returncode == 0, f"sphinx-build failed:\n{run.stdout}\n{run.stderr}"
    return out


def test_every_public_name_is_in_the_api_reference(site):
    page = (site / "api.html").read_text(encoding="utf-8")
    missing = [name for name in bridge.__all__ if f'id="bridge.{name}"' not in page]
    assert not missing, f"not documented in docs/api.md: {missing}"


def test_every_guide_page_is_reachable_from_the_index(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    pages = sorted(p.stem for p in (DOCS / "guide").glob("*.md"))
    assert pages, "no user guide pages"
    unlinked = [p for p in pages if f'href="guide/{p}.html"' not in index]
    assert not unlinked, f"guide pages missing from the index's table of contents: {unlinked}"


def test_readme_is_a_first_page():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; the user guide in docs/ holds the details"
    text = "\n".join(lines)
    for command in ("bash scripts/demo.sh", "bash scripts/test.sh"):
        assert command in text
    for link in re.findall(r"\]\(((?!https?:)[^)#]+)\)", text):
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"


HISTORY = re.compile(r"\b(issue \d+|issues? #?\d+|last (stop|session)|this machine|before/after)\b", re.IGNORECASE)


def test_no_page_or_docstring_speaks_of_history():
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "fmu" / "README.md", *DOCS.rglob("*.md")]
    found = []
    for path in files:
        if "_build" in path.parts:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if HISTORY.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    for path in (ROOT / "bridge").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node) or ""
                if HISTORY.search(doc):
                    found.append(f"{path.relative_to(ROOT)}: docstring of {getattr(node, 'name', 'the module')}: "
                                 f"{HISTORY.search(doc).group(0)!r}")
    assert not found, "history belongs in git and CHANGELOG.md:\n" + "\n".join(found)


def test_no_page_points_outside_the_repository():
    found = [f"{p.relative_to(ROOT)}" for p in [ROOT / "README.md", *DOCS.rglob("*.md")]
             if "_build" not in p.parts and "../shared" in p.read_text(encoding="utf-8")]
    assert not found, f"pages referring to folders outside the repository: {found}"


def test_the_keys_page_lists_every_key_the_loader_accepts():
    """docs/guide/keys.md names every table and key the loader knows, so the reference cannot fall behind."""
    from bridge.model import bodies, contacts, efforts, equation_tables, load_table, setting_tables, state_tables

    page = (DOCS / "guide" / "keys.md").read_text(encoding="utf-8")
    expected = {f"[{t}]" if t not in ("name", "description") else t for t in state_tables.TOP_LEVEL}
    for keys in (state_tables.COORDINATE_KEYS, state_tables.PARAMETER_KEYS, state_tables.INPUT_KEYS,
                 equation_tables.OUTPUT_KEYS, equation_tables.ENERGY_KEYS, equation_tables.CONSTRAINT_KEYS,
                 setting_tables.METHOD_KEYS, setting_tables.SIMULATION_KEYS,
                 bodies.FRAME_KEYS, bodies.POINT_KEYS, bodies.BODY_KEYS, bodies.PARTICLE_KEYS, bodies.GRAVITY_KEYS,
                 efforts.EFFORT_KEYS, efforts.FRICTION_KEYS, efforts.DYNAMIC_KEYS, efforts.DIODE_KEYS,
                 load_table.LOAD_KEYS, *contacts.KINDS.values()):
        expected |= set(keys)
    expected |= set(contacts.KINDS)
    missing = sorted(k for k in expected if f"`{k}`" not in page and f"`{k} " not in page)
    assert not missing, f"docs/guide/keys.md does not list: {missing}"
