"""Hostile and borderline inputs of the rigid-body tables ([frames], [bodies], [contacts]): name hints, deep frame
chains, direction cosines that stop being a rotation, the Chaplygin structure on simplified terms, redundant contact
rows and units."""

from __future__ import annotations

from pathlib import Path

from bridge.cli import main

BAD = Path(__file__).parent / "bad_inputs"


def _check(path, capsys) -> tuple[int, str]:
    code = main(["check", str(path)])
    return code, capsys.readouterr().err


def test_frame_typo_suggests_the_frame_and_does_not_deny_the_body(capsys):
    code, err = _check(BAD / "body_frame_case_typo.toml", capsys)
    assert code == 2 and "Traceback" not in err
    assert "unknown frame 'wl'. Did you mean 'wL'?" in err
    assert "loads.motorL.torque: 'wl' is not a frame" in err and err.count("Did you mean 'wL'?") == 2
    assert "loads.motorL.body: 'wheelL' has errors above (bodies.wheelL)" in err
    assert "is not a rigid body" not in err and "wheelR" not in err
