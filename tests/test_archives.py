"""Archives from others (issue 11): zip bombs, unsafe names, hostile modelIdentifiers and XML, corrupt FMUs;
reproducible archives; SSP packages with duplicate or unknown component names; FMUs with no interface.

The FMUs are real (tests/foreign_fmu.py compiles a tiny C FMU with gcc). Zip bombs are made of repeated raw
DEFLATE blocks (a 1 MB file that expands to 1 GiB is written in half a second); Python's zipfile reads them.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from dataclasses import replace
from pathlib import Path

import pytest

pytest.importorskip("fmpy")

import bridge
from bridge.cli import main
from bridge.cosim import CosimError, check_scenario, prepare, read_ssp, write_ssp
from bridge.fmu.archive import MAX_MEMBERS, ArchiveError, check_archive, extract, zip_time

from .foreign_fmu import MODEL_DESCRIPTION, compile_library, foreign_fmu

ROOT = Path(__file__).parent.parent
COMMITTED_SSP = ROOT / "examples" / "cosim" / "hydropulsator_motors.ssp"
PENDULUM = ROOT / "examples" / "simple_pendulum.toml"
MiB = 2**20


def raw_zip(members: list[tuple[str, bytes | int]], declared: dict[str, int] | None = None) -> bytes:
    """A zip archive written by hand; an int member is that many zero bytes as repeated DEFLATE blocks of 1 MiB.
    ``declared`` overrides the uncompressed size written into the headers (a member that lies)."""
    out, central = io.BytesIO(), []
    block = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk = block.compress(bytes(MiB)) + block.flush(zlib.Z_FULL_FLUSH)
    for name, content in members:
        if isinstance(content, int):
            n = content // MiB
            data, size, crc = chunk * n + b"\x03\x00", n * MiB, 0
            for _ in range(n):
                crc = zlib.crc32(bytes(MiB), crc)
        else:
            c = zlib.compressobj(9, zlib.DEFLATED, -15)
            data, size, crc = c.compress(content) + c.flush(), len(content), zlib.crc32(content)
        size = (declared or {}).get(name, size)
        offset, raw = out.tell(), name.encode()
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(data), size, len(raw), 0)
                  + raw + data)
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21, crc, len(data), size,
                                   len(raw), 0, 0, 0, 0, 0o644 << 16, offset) + raw)
    start = out.tell()
    for entry in central:
        out.write(entry)
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central), out.tell() - start, start, 0))
    return out.getvalue()


def members_of(path: Path) -> list[tuple[str, bytes]]:
    with zipfile.ZipFile(path) as z:
        return [(n, z.read(n)) for n in z.namelist()]


@pytest.fixture(scope="module")
def good_fmu(tmp_path_factory) -> Path:
    return foreign_fmu(tmp_path_factory.mktemp("good"), "ok", name="Good")


def scenario_with(folder: Path, fmu: Path) -> Path:
    path = folder / "scenario.toml"
    path.write_text(f'[components.a]\nfmu = "{fmu}"\n[master]\nstep = 0.01\nstop_time = 0.1\n')
    return path


def largest_file(folder: Path) -> int:
    return max((p.stat().st_size for p in folder.rglob("*") if p.is_file()), default=0)


# -- zip bombs ------------------------------------------------------------------------------------------------
def test_an_fmu_that_expands_to_1_gib_is_refused_before_anything_is_unpacked(good_fmu, tmp_path, capsys):
    bomb = tmp_path / "bomb.fmu"
    bomb.write_bytes(raw_zip([*members_of(good_fmu), ("resources/table.bin", 2**30)]))
    assert bomb.stat().st_size < 1.2 * MiB
    assert main(["cosim", str(scenario_with(tmp_path, bomb)), "-o", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert "resources/table.bin' expands 1.0 MiB to 1024.0 MiB" in err and "zip bomb" in err
    work = tmp_path / "work"
    with pytest.raises(CosimError, match="zip bomb"), prepare(scenario_with(tmp_path, bomb), work):
        pass
    assert largest_file(work) < MiB  # nothing of the member was written
    assert main(["validate", str(PENDULUM), "--runs", "methods", "--methods", "lagrange", "-q", "--stop-time", "0.1",
                 "--fmu", str(bomb)]) == 2
    assert "not a loadable FMU" in capsys.readouterr().out


def test_total_size_member_count_and_lying_sizes_are_limited(tmp_path):
    many = tmp_path / "many.zip"  # 600 members of 1 MiB, each within the ratio limit: 600 MiB in all
    many.write_bytes(raw_zip([(f"m{k}.bin", MiB) for k in range(600)]))
    with pytest.raises(ArchiveError, match="expands to 600.0 MiB, more than the limit of 512.0 MiB"):
        check_archive(many)
    crowd = tmp_path / "crowd.zip"
    crowd.write_bytes(raw_zip([(f"f{k}", b"") for k in range(MAX_MEMBERS + 1)]))
    with pytest.raises(ArchiveError, match="has 10001 members, more than the limit of 10000"):
        check_archive(crowd)
    liar = tmp_path / "liar.zip"  # declares 1 MiB, holds 256 MiB: reading stops at the declared size
    liar.write_bytes(raw_zip([("data.bin", 256 * MiB)], declared={"data.bin": MiB}))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ArchiveError, match="corrupt"):
        extract(liar, out)
    assert largest_file(out) <= MiB


def test_an_ssp_whose_structure_expands_to_1_gib_is_refused(tmp_path, capsys):
    members = members_of(COMMITTED_SSP)
    bomb = tmp_path / "bomb.ssp"
    bomb.write_bytes(raw_zip([(n, d) for n, d in members if n != "SystemStructure.ssd"]
                             + [("SystemStructure.ssd", 2**30)]))
    assert main(["cosim", str(bomb), "-o", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert "SystemStructure.ssd' expands" in err and "zip bomb" in err and "Traceback" not in err


# -- names, identifiers, XML ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["../evil.txt", "/tmp/evil.txt", "a\\..\\..\\evil.txt", "C:/evil.txt",
                                  "resources/../../evil.txt"])
def test_members_with_unsafe_names_are_refused_and_nothing_is_written_outside(name, good_fmu, tmp_path, capsys):
    hostile = tmp_path / "pack" / "hostile.fmu"
    hostile.parent.mkdir()
    hostile.write_bytes(raw_zip([*members_of(good_fmu), (name, b"owned")]))
    assert main(["cosim", str(scenario_with(hostile.parent, hostile)), "-o", str(tmp_path / "o.csv")]) == 2
    assert "has an unsafe name" in capsys.readouterr().err
    assert not list(tmp_path.rglob("evil.txt")) and not Path("/tmp/evil.txt").exists()


def test_a_model_identifier_outside_the_fmu_is_refused_and_never_loaded(tmp_path, capsys):
    marker = tmp_path / "loaded"
    work = tmp_path / "work"
    work.mkdir()
    # the library the identifier points to: <unpack folder>/binaries/linux64/../../../evil.so = work/evil.so
    compile_library(f'#include <stdio.h>\n__attribute__((constructor)) static void hit(void) {{ '
                    f'FILE *f = fopen("{marker}", "w"); if (f) fclose(f); }}\n', work / "evil.so")
    evil = foreign_fmu(tmp_path, "ok", name="Evil", identifier="../../../evil")
    with (pytest.raises(CosimError, match="modelIdentifier '../../../evil' is not a plain identifier"),
          prepare(scenario_with(tmp_path, evil), work) as cs):
        cs.run()
    assert main(["validate", str(PENDULUM), "--runs", "methods", "--methods", "lagrange", "-q", "--stop-time", "0.1",
                 "--fmu", str(evil)]) == 2
    assert "is not a plain identifier" in capsys.readouterr().out
    assert not marker.exists()


@pytest.mark.parametrize("folder", ["win64", "x86_64-windows", "aarch64-linux", "x86_64-linux"])
def test_every_platform_folder_of_an_fmu_is_checked_not_only_linux64(folder, tmp_path):
    """A library that resolves outside the FMU is refused in whichever platform folders the FMU carries (FMI 2
    and FMI 3 names), with the platform's library suffix; an FMU whose libraries stay inside passes."""
    from types import SimpleNamespace

    from bridge.fmu.archive import check_identifiers, library_suffix

    md = SimpleNamespace(modelExchange=SimpleNamespace(modelIdentifier="Model"), coSimulation=None)
    outside = tmp_path / "outside"
    outside.mkdir()
    unpacked = tmp_path / "fmu"
    (unpacked / "binaries" / folder).mkdir(parents=True)
    (unpacked / "binaries" / folder / f"Model{library_suffix(folder)}").write_bytes(b"")
    check_identifiers(md, unpacked, "inside.fmu")  # the library lies inside: accepted
    (unpacked / "binaries" / folder / f"Model{library_suffix(folder)}").unlink()
    (unpacked / "binaries" / folder / f"Model{library_suffix(folder)}").symlink_to(outside / "Model.lib")
    with pytest.raises(ArchiveError, match=f"the {folder} binary of 'Model' resolves outside the FMU"):
        check_identifiers(md, unpacked, "hostile.fmu")
    with pytest.raises(ArchiveError, match="resolves outside"):  # the host's folder named by the caller as well
        check_identifiers(md, unpacked, "hostile.fmu", platform=folder)
    assert library_suffix(folder) == (".dll" if "win" in folder else ".so")


def test_corrupt_fmus_are_bad_input_not_failed_runs(good_fmu, tmp_path, capsys):
    truncated = tmp_path / "truncated.fmu"
    truncated.write_bytes(good_fmu.read_bytes()[: good_fmu.stat().st_size // 2])
    empty = tmp_path / "empty.fmu"
    empty.write_bytes(raw_zip([("binaries/linux64/x.so", b"")]))
    for fmu, expected in ((truncated, "not a readable zip archive"), (empty, "no modelDescription.xml")):
        assert main(["cosim", str(scenario_with(tmp_path, fmu)), "-o", str(tmp_path / "o.csv")]) == 2
        assert expected in capsys.readouterr().err
        assert main(["validate", str(PENDULUM), "--runs", "methods", "--methods", "lagrange", "-q", "--stop-time",
                     "0.1", "--fmu", str(fmu)]) == 2


def test_xml_entities_are_never_resolved(tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-42")
    doctype = f'<!DOCTYPE fmiModelDescription [<!ENTITY leak SYSTEM "file://{secret}">]>\n'
    text = MODEL_DESCRIPTION.format(name="Leaky", identifier="Leaky", mode=0)
    text = text.replace("<fmiModelDescription", doctype + "<fmiModelDescription", 1).replace(
        'generationTool="tests/foreign_fmu.py"', 'generationTool="tests/foreign_fmu.py" description="&leak;"')
    leaky = foreign_fmu(tmp_path, "ok", name="Leaky", description=text)
    assert main(["cosim", str(scenario_with(tmp_path, leaky)), "-o", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert "modelDescription.xml" in err and "TOP-SECRET" not in err and "Traceback" not in err
    laughs = text.replace(f'<!ENTITY leak SYSTEM "file://{secret}">', '<!ENTITY a "ha"><!ENTITY leak "&a;&a;&a;">')
    laughing = foreign_fmu(tmp_path, "ok", name="Leaky", description=laughs)  # internal entities: no DTD at all
    assert main(["cosim", str(scenario_with(tmp_path, laughing)), "-o", str(tmp_path / "o.csv")]) == 2
    assert "declares a DTD" in capsys.readouterr().err
    members = dict(members_of(COMMITTED_SSP))
    ssd = members["SystemStructure.ssd"].decode()
    members["SystemStructure.ssd"] = ssd.replace("<ssd:SystemStructureDescription", doctype.replace(
        "fmiModelDescription", "ssd:SystemStructureDescription") + "<ssd:SystemStructureDescription", 1).replace(
        '<ssd:System name="HydropulsatorMotors"', '<ssd:System name="HydropulsatorMotors" description="&leak;"',
        1).encode()
    assert b"&leak;" in members["SystemStructure.ssd"]
    ssp = tmp_path / "leaky.ssp"
    ssp.write_bytes(raw_zip(list(members.items())))
    try:
        scenario = read_ssp(ssp, tmp_path / "unpacked")
    except CosimError as exc:
        assert "TOP-SECRET" not in str(exc)
    else:
        assert "TOP-SECRET" not in scenario.description


# -- reproducible archives -----------------------------------------------------------------------------------
def test_identical_builds_give_identical_bytes(tmp_path, monkeypatch):
    from bridge.fmu.build import build_fmu

    eom = bridge.derive(bridge.load_system(PENDULUM), "lagrange")
    a, b = build_fmu(eom, tmp_path / "a.fmu"), build_fmu(eom, tmp_path / "b.fmu", 2)
    assert a.read_bytes() == b.read_bytes()
    with zipfile.ZipFile(a) as z:
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
    assert modes["modelDescription.xml"] == 0o100644 and modes["binaries/linux64/SimplePendulum.so"] == 0o100755
    with prepare(COMMITTED_SSP, tmp_path / "work") as cs:
        first = write_ssp(cs.plan, cs.fmus, tmp_path / "first.ssp").read_bytes()
        assert write_ssp(cs.plan, cs.fmus, tmp_path / "second.ssp").read_bytes() == first
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")  # 2023-11-14 22:13:20 UTC
    assert zip_time() == (2023, 11, 14, 22, 13, 20)
    c = build_fmu(eom, tmp_path / "c.fmu")
    with zipfile.ZipFile(c) as z:
        assert {i.date_time for i in z.infolist()} == {(2023, 11, 14, 22, 13, 20)}


# -- SSP component names ---------------------------------------------------------------------------------------
def _ssp_with(tmp_path: Path, name: str, change) -> Path:
    members = dict(members_of(COMMITTED_SSP))
    members["SystemStructure.ssd"] = change(members["SystemStructure.ssd"].decode()).encode()
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        for member, data in members.items():
            z.writestr(member, data)
    return path


def test_duplicate_or_unknown_component_names_are_bad_input_and_never_written(tmp_path, capsys):
    def duplicate(ssd: str) -> str:
        return ssd.replace('<ssd:Component name="motor_d"', '<ssd:Component name="motor_r"', 1)

    def unknown(ssd: str) -> str:
        return ssd.replace('startElement="motor_r"', 'startElement="ghost"', 1)

    for name, change, message in (("dup.ssp", duplicate, "the component name is used twice"),
                                  ("unknown.ssp", unknown, "no component 'ghost'")):
        path = _ssp_with(tmp_path, name, change)
        assert path.read_bytes() != COMMITTED_SSP.read_bytes()
        out = tmp_path / f"out-{name}"
        assert main(["ssp", str(path), "-o", str(out)]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and not out.exists()
        assert main(["cosim", str(path), "-o", str(tmp_path / "o.csv")]) == 2
        assert message in capsys.readouterr().err
    with prepare(COMMITTED_SSP, tmp_path / "work") as cs:  # the same through the Python API
        sc = cs.scenario
        twice = replace(sc, components=(*sc.components, sc.components[0]))
        with pytest.raises(CosimError, match="is used 2 times"):
            check_scenario(twice, cs.plan.infos)
        with pytest.raises(CosimError, match="is used 2 times"):
            write_ssp(replace(cs.plan, scenario=twice), cs.fmus, tmp_path / "never.ssp")
        assert not (tmp_path / "never.ssp").exists()


def test_an_fmu_with_neither_interface_is_an_error_in_the_validation_report(tmp_path, capsys):
    text = MODEL_DESCRIPTION.format(name="Nothing", identifier="Nothing", mode=0)
    line = '  <CoSimulation modelIdentifier="Nothing" canHandleVariableCommunicationStepSize="true"/>\n'
    text = text.replace(line, "")
    assert "CoSimulation" not in text
    nothing = foreign_fmu(tmp_path, "ok", name="Nothing", description=text)
    assert main(["validate", str(PENDULUM), "--runs", "methods", "--methods", "lagrange", "--stop-time", "0.1",
                 "--fmu", str(nothing)]) == 2
    out = capsys.readouterr().out
    assert "external-Nothing" in out and "neither Model Exchange nor Co-Simulation" in out
