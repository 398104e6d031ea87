"""The command pattern: every stage's ``command.py`` registers its sub-commands through ``COMMANDS``, ``bridge.cli``
lists them all once, and the version is written in one place."""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import bridge
from bridge import cli
from bridge.commandline import Command

ROOT = Path(__file__).resolve().parent.parent
COMMAND_FILES = sorted((ROOT / "bridge").glob("*/command.py"))


def stage_commands() -> dict[str, tuple[str, Command]]:
    """Every sub-command found in the stages' command modules (by file, not through the CLI), by name."""
    found: dict[str, tuple[str, Command]] = {}
    for path in COMMAND_FILES:
        module = importlib.import_module(f"bridge.{path.parent.name}.command")
        for command in module.COMMANDS:
            assert command.name not in found, f"{command.name} defined by {found[command.name][0]} and {module}"
            found[command.name] = (module.__name__, command)
    return found


def test_every_stage_command_is_registered_once_in_the_help_order():
    found = stage_commands()
    assert len(COMMAND_FILES) >= 10
    assert set(cli.commands()) == set(found)
    for name, command in cli.commands().items():
        assert command is found[name][1]
        assert isinstance(command, Command) and command.name == name and callable(command.run)
    parser = cli.build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(sub.choices) == list(cli.commands())  # the registry's order is the order --help shows


@pytest.mark.parametrize("name", sorted(stage_commands()))
def test_each_command_adds_exactly_its_own_parser(name):
    """``add_parser`` adds one sub-command, named as its record, that parses ``--help`` and exits 0."""
    command = stage_commands()[name][1]
    parser = argparse.ArgumentParser(prog="nhbridge")
    sub = parser.add_subparsers(dest="command")
    assert command.add_parser(sub) is None
    assert list(sub.choices) == [name]
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args([name, "--help"])
    assert exit_.value.code == 0


def test_cli_stays_a_registry():
    assert len((ROOT / "bridge" / "cli.py").read_text(encoding="utf-8").splitlines()) <= 200


@pytest.mark.parametrize("heavy", ["sympy", "numpy", "scipy"])
def test_import_cli_is_light(heavy):
    """``import bridge.cli`` loads no stage: the command modules come when the parser is built."""
    code = f"import sys, bridge.cli; print({heavy!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "False"


def test_version_is_written_once(capsys):
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "bridge.version.__version__"}
    from setuptools.config.expand import read_attr

    assert read_attr("bridge.version.__version__", root_dir=ROOT) == bridge.__version__  # what setuptools builds
    assert importlib.metadata.version("nhbridge") == bridge.__version__  # the installed metadata
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"nhbridge {bridge.__version__}\n"


def test_console_entry_point_runs_the_registry():
    """``python -m bridge.cli`` (as the ``nhbridge`` script): an unknown command is bad input, exit code 2."""
    out = subprocess.run([sys.executable, "-m", "bridge.cli", "no-such-command"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2
    assert "invalid choice: 'no-such-command'" in out.stderr and "Traceback" not in out.stderr
    for name in cli.commands():
        assert name in out.stderr
