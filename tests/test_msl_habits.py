"""MSL habits (issue 13 requirement 5): units on every variable in one spelling, no start=-0.0, the equations in
the Documentation, an experiment annotation, and the library modelica/ as a package through both compilers."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

import bridge
from bridge.model.units import BASE, parse_unit, unit_problem
from bridge.modelica.dimensions import Dimensions, unit_text
from bridge.modelica.documentation import MAX_TOTAL
from bridge.modelica.export import model_source

ROOT = Path(__file__).parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
LIBRARY = ROOT / "modelica"
DECLARATION = re.compile(r"^  (?:protected )?(?:output |input |parameter )?Real (\S+?)(\(.*\))? (?:= \S+ )?\"")


def _declarations(text: str) -> dict[str, str]:
    """Every Real variable -> its modifiers."""
    out = {}
    for line in text.splitlines():
        m = DECLARATION.match(line)
        if m:
            out[m.group(1)] = m.group(2) or ""
    return out


def _fully_united(system) -> bool:
    return all(x.unit for x in (*system.coordinates, *system.parameters, *system.inputs))


@pytest.mark.parametrize("method", ["lagrange", "maggi"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_variable_has_a_unit_in_one_spelling(path, method, derivations):
    system = bridge.load_system(path)
    if not _fully_united(system):
        pytest.skip("a coordinate, parameter or input without a unit: derived units stay off")
    try:
        eom = derivations.eom(path, method)  # once per run: the multiplier tests below derive the same
    except bridge.BridgeError as exc:
        pytest.skip(f"{method} does not apply: {exc}")
    text = model_source(eom, "index1", accelerations="implicit")
    declared = _declarations(text)
    assert declared
    missing = [name for name, mods in declared.items() if "unit=" not in mods]
    assert not missing, missing
    # the default (the form bridge.modelica.forms chooses): the same, except temporaries of a rescaled form,
    # which may mix units (no unit rather than a wrong one)
    default = model_source(eom)
    missing = [name for name, mods in _declarations(default).items()
               if "unit=" not in mods and not name.startswith("nhb_cse")]
    assert not missing, missing
    for unit in re.findall(r'unit="([^"]*)"', text + default):
        assert unit_problem(unit) is None, unit
        assert not re.search(r"[a-zA-Z]-\d", unit), unit  # m/s, not m.s-1
    assert not re.search(r"start=-0\.0[,)]", text + default)


@pytest.mark.parametrize("exps", [e for e in itertools.product(range(-2, 3), repeat=3)] + [
    (1, 1, -2, 0, 0, 0, 0, -1), (0, 0, -1, 1, 0, 0, 0, 1), (2, -3, 1, 0, -1, 0, 0, 0)])
def test_unit_text_parses_back_to_the_same_unit(exps):
    """unit_text's spelling, read by the independent unit parser, is the same base unit."""
    e = tuple(exps) + (0,) * (len(BASE) - len(exps))
    text = unit_text(e)
    assert unit_problem(text) is None, text
    parsed = parse_unit(text)
    assert parsed is not None and parsed.exponents == e and parsed.factor == 1.0, text
    assert text.count("/") <= 1


def test_unit_text_spells_as_the_msl():
    _kg, _m, _s = (tuple(1 if n == b else 0 for n in BASE) for b in ("kg", "m", "s"))

    def u(**k):
        return tuple(k.get(n, 0) for n in BASE)

    assert unit_text(u(kg=1, m=1, s=-2)) == "N" and unit_text(u(kg=1, m=2, s=-2)) == "N.m"
    assert unit_text(u(m=1, s=-1)) == "m/s" and unit_text(u(rad=1, s=-2)) == "rad/s2"
    assert unit_text(u(kg=1, s=-2)) == "N/m" and unit_text(u(s=-1)) == "1/s" and unit_text(u()) == "1"
    assert unit_text(u(kg=1, m=2)) == "kg.m2"


def test_units_written_with_negative_exponents_get_the_msl_spelling():
    text = (ROOT / "examples" / "simple_pendulum.toml").read_text().replace(
        'unit = "m/s2"', 'unit = "m.s-2"').replace('unit = "rad"', 'unit = "m.rad-1"').replace(
        'unit = "kg", ', "")  # the mass without a unit: T in a coordinate of m.rad-1 is not judged an energy
    source = model_source(bridge.derive(bridge.parse_system(text), "lagrange"))
    units = re.findall(r'unit="([^"]*)"', source)
    assert "m/s2" in units and "m/rad" in units and "m/(s.rad)" in units
    assert not [u for u in units if re.search(r"[a-zA-Z]-\d", u)]


def test_multiplier_units_from_the_constraints(derivations):
    """Closed forms: the sleigh's knife edge carries a force (N); the Cartesian pendulum's x^2 + y^2 = l^2 has
    A = 2 [x, y], so its multiplier is a force per length (N/m)."""
    for name, unit in (("chaplygin_sleigh", "N"), ("cartesian_pendulum", "N/m"), ("rolling_sphere", "N")):
        eom = derivations.eom(ROOT / "examples" / f"{name}.toml", "lagrange")
        assert set(Dimensions(eom).multipliers()) == {unit}, name
        assert f'lambda[{len(eom.multipliers)}](each unit="{unit}")' in model_source(eom)


@pytest.mark.parametrize("path", [p for p in EXAMPLES if "constraints" in p.read_text()], ids=lambda p: p.stem)
def test_multiplier_units_balance_the_dynamic_rows(path, derivations):
    """In row j of M q'' - A^T lambda = f, A_kj*lambda_k has the unit of M_jj*q''_j (the mass matrix comes from
    differentiating T, the multiplier's unit from T's unit and the constraint row: two paths)."""
    from bridge.modelica.dimensions import exponents, unit_text

    system = bridge.load_system(path)
    eom = derivations.eom(path, "lagrange")
    if not eom.multipliers or not _fully_united(system):
        pytest.skip("no multipliers, or units missing")
    dims = Dimensions(eom)
    units = dims.multipliers()
    A, M = eom.constraint_jacobian, eom.mass_matrix
    checked = 0
    for j, c in enumerate(system.coordinates):
        inertia = dims.of(M[j, j] * c.acceleration_symbol, keep_rad=False)
        if M[j, j] == 0 or inertia is None:
            continue
        for k, unit in enumerate(units):
            if A[k, j] == 0:
                continue
            assert unit, (path.stem, k)
            product = dims.of(A[k, j], keep_rad=False)
            assert product is not None
            total = tuple(a + b for a, b in zip(product, exponents(unit)))
            assert total == inertia, (c.name, k, unit_text(total), unit_text(inertia))
            checked += 1
    assert checked


def test_no_unit_rather_than_a_wrong_one():
    """A parameter without a unit in the constraint: the multiplier and residual stay without a unit."""
    text = (ROOT / "examples" / "chaplygin_sleigh.toml").read_text().replace(
        'a = { value = 0.2, unit = "m",', 'a = { value = 0.2,')
    eom = bridge.derive(bridge.parse_system(text), "lagrange")
    source = model_source(eom)
    assert re.search(r"Real lambda\[1\] ", source) and re.search(r"Real residual\[1\] ", source)


def test_no_negative_zero_start():
    text = (ROOT / "examples" / "simple_pendulum.toml").read_text().replace(
        "start = 0.5, velocity = 0.3", "start = -0.0, velocity = -0.0")
    source = model_source(bridge.derive(bridge.parse_system(text), "lagrange"))
    assert not re.search(r"-0\.0[,)]", source) and 'theta(start=0.0' in source


def test_documentation_holds_the_equations(derivations):
    eom = derivations.eom(ROOT / "examples" / "chaplygin_sleigh.toml", "lagrange")
    source = model_source(eom)
    info = source[source.index("Documentation(info="):]
    assert "<li>T = <code>" in info and "der(theta)^2" in info
    assert "constraints.nonholonomic[1]: <code>-a*der(theta) - der(x)*sin(theta) + der(y)*cos(theta)</code> = 0" \
        in info
    assert "Q + A^T*lambda" in info and "experiment(StopTime=" in source


def test_documentation_is_bounded_for_big_systems():
    """A chain of 20 masses and springs with long force laws: the documentation stays bounded and says so."""
    n = 20
    coords = "\n".join(f'x{i} = {{ start = {0.01 * i}, unit = "m" }}' for i in range(n))
    long_force = " + ".join(f"0.001*x{j}*x{(j + 1) % n}" for j in range(n))
    forces = "\n".join(f'x{i} = "{long_force} + {" + ".join(f"1e-6*x{i}^{k}" for k in range(2, 40))}"'
                       for i in range(n))
    kinetic = " + ".join(f"der(x{i})^2" for i in range(n))
    potential = " + ".join(f"(x{i} - x{i - 1})^2" for i in range(1, n))
    text = (f'name = "Chain"\n[coordinates]\n{coords}\n[energy]\nkinetic = "{kinetic}"\npotential = "{potential}"\n'
            f"[forces]\n{forces}\n")
    source = model_source(bridge.derive(bridge.parse_system(text), "lagrange"))
    info = source[source.index("Documentation(info="):]
    assert "more not listed here" in info or "cut here" in info
    assert len(info) < MAX_TOTAL + 5000


def _package_models() -> list[str]:
    return (LIBRARY / "NonholonomicExamples" / "package.order").read_text().split()


@pytest.mark.parametrize("name", _package_models())
def test_the_library_as_a_package_in_rumoca(name):
    rumoca = pytest.importorskip("rumoca")
    path = LIBRARY / "NonholonomicExamples" / f"{name}.mo"
    model = rumoca.loads(path.read_text(encoding="utf-8"), model=f"NonholonomicExamples.{name}",
                         filename=str(path), roots=[str(LIBRARY)])
    assert model.structure().is_balanced


@pytest.mark.parametrize("name", _package_models())
def test_the_library_as_a_package_in_pymoca(name):
    pytest.importorskip("pymoca")
    from bridge.tools.pymoca import require_pymoca

    _, transfer_model = require_pymoca()
    model = transfer_model(str(LIBRARY), f"NonholonomicExamples.{name}",
                           {"replace_constant_values": True, "replace_parameter_values": True,
                            "resolve_parameter_values": True, "check_balanced": False})
    unknowns = sum(v.symbol.numel() for v in (*model.states, *model.alg_states))
    inputs = sum(v.symbol.numel() for v in model.inputs)
    assert unknowns > 0 and sum(e.numel() for e in model.equations) == unknowns, (unknowns, inputs)
    assert not [p.symbol.name() for p in model.parameters]  # every parameter has its value


def test_the_connector_package_in_both_compilers():
    """modelica/NHBridge: Rumoca validates it without a diagnostic; pymoca parses its four flanges (the assembly
    in tests/test_ports.py compiles and simulates them connected)."""
    text = (LIBRARY / "NHBridge" / "package.mo").read_text(encoding="utf-8")
    rumoca = pytest.importorskip("rumoca")
    assert rumoca.validate_source(text) == []
    pytest.importorskip("pymoca")
    from pymoca import parser

    mechanics = parser.parse(text).classes["NHBridge"].classes["Mechanics"]
    for library, (p, f) in {"Rotational": ("phi", "tau"), "Translational": ("s", "f")}.items():
        interfaces = mechanics.classes[library].classes["Interfaces"].classes
        for side in ("Flange_a", "Flange_b"):
            connector = interfaces[side]
            assert connector.type == "connector" and set(connector.symbols) == {p, f}
            assert "flow" in connector.symbols[f].prefixes and "flow" not in connector.symbols[p].prefixes
