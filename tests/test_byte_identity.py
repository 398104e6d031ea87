"""scripts/byte_identity.py: the manifest, the comparison and the unpacking of archives it relies on (the full run
over every example is a merge-time script, not a test)."""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "byte_identity.py"


def load_script():
    spec = importlib.util.spec_from_file_location("byte_identity", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_compare_reports_changed_missing_and_identical_files(tmp_path, capsys):
    bi = load_script()
    a, b = tmp_path / "a", tmp_path / "b"
    for folder in (a, b):
        (folder / "ex" / "lagrange").mkdir(parents=True)
        (folder / "ex" / "lagrange" / "same.mo").write_text("model M\nend M;\n")
    (a / "ex" / "lagrange" / "model.c").write_text("double x = 1.0;\nint k;\n")
    (b / "ex" / "lagrange" / "model.c").write_text("double x = 2.0;\nint k;\n")
    (a / "ex" / "only_a.xml").write_text("<a/>")
    assert bi.compare(a, b, "rev", "working", lines=20) == 2
    out = capsys.readouterr().out
    assert "DIFFERS: ex/lagrange/model.c" in out and "-double x = 1.0;" in out and "+double x = 2.0;" in out
    assert "ONLY IN rev: ex/only_a.xml" in out and "same.mo" not in out
    assert bi.manifest(a)["ex/lagrange/same.mo"] == bi.manifest(b)["ex/lagrange/same.mo"]


def test_unpack_keeps_sources_and_nested_fmus_without_binaries(tmp_path):
    bi = load_script()
    inner = tmp_path / "inner.fmu"
    with zipfile.ZipFile(inner, "w") as z:
        z.writestr("modelDescription.xml", "<fmiModelDescription/>")
        z.writestr("sources/model.c", "int x;")
        z.writestr("binaries/linux64/M.so", b"\x7fELF")
    ssp = tmp_path / "s.ssp"
    with zipfile.ZipFile(ssp, "w") as z:
        z.writestr("SystemStructure.ssd", "<ssd/>")
        z.write(inner, "resources/M.fmu")
        z.writestr("../escape.txt", "outside")
    out = tmp_path / "s.ssp.d"
    bi.unpack_archive(ssp, out)
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == ["SystemStructure.ssd", "resources/M.fmu.d/modelDescription.xml",
                     "resources/M.fmu.d/sources/model.c"]
    assert not ssp.exists() and not (tmp_path / "escape.txt").exists()


def test_examples_filters_by_only_and_skip():
    bi = load_script()
    root = SCRIPT.parent.parent
    every = bi.examples(root, [])
    assert "examples/simple_pendulum.toml" in every
    assert bi.examples(root, ["examples/simple_*"]) == ["examples/simple_pendulum.toml"]
    assert not [e for e in bi.examples(root, [], ["examples/*/bicycle*"]) if "bicycle" in e.rsplit("/", 1)[-1]]


def test_an_example_missing_at_a_revision_is_left_out_not_a_failed_worker(tmp_path, monkeypatch, capsys):
    """An example added after REV is generated for the working tree only (no worker fails on a missing file)."""
    bi = load_script()
    seen = []
    monkeypatch.setattr(bi, "generate", lambda jobs, *a, **k: seen.extend(jobs) or [])
    monkeypatch.setattr(bi, "examples", lambda *a, **k: ["examples/simple_pendulum.toml", "examples/not_there.toml"])
    assert bi.main(["--out", str(tmp_path)]) == 0
    assert [ex for _, ex, _ in seen] == ["examples/simple_pendulum.toml"]
    assert "1 example(s) not in working: examples/not_there.toml" in capsys.readouterr().out
