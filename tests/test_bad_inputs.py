"""Every bad system file gets a clear one-paragraph error naming file and entry, exit code 2, no traceback."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from bridge.cli import main

HERE = Path(__file__).parent / "bad_inputs"
EXPECTED = tomllib.loads((HERE / "expected.toml").read_text(encoding="utf-8"))


def test_enough_bad_inputs():
    assert len(EXPECTED) >= 25
    assert sorted(EXPECTED) == sorted(p.name for p in HERE.glob("*.toml") if p.name != "expected.toml")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_input_is_reported(name, capsys):
    spec = EXPECTED[name]
    path = HERE / name
    code = main(["check", str(path)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    paragraphs = [p for p in err.splitlines() if p.strip()]
    assert all(p.startswith(str(path)) for p in paragraphs), err
    matching = [p for p in paragraphs if f": {spec['entry']}:" in p]
    assert matching, f"no paragraph names entry {spec['entry']!r}:\n{err}"
    text = " ".join(matching).lower()
    for word in spec["contains"]:
        assert word.lower() in text, f"{word!r} missing from:\n{err}"
    if "paragraphs" in spec:  # no follow-on paragraph computed from a value already refused
        assert len(paragraphs) == spec["paragraphs"], err


@pytest.mark.parametrize("command", ["derive", "simulate"])
def test_other_commands_report_bad_input_too(command, capsys, tmp_path):
    path = HERE / "nonholonomic_not_linear.toml"
    args = [command, str(path)] + (["-o", str(tmp_path / "x.csv")] if command == "simulate" else [])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "not linear" in err and "Traceback" not in err
    assert not (tmp_path / "x.csv").exists()
