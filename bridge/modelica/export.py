"""Modelica models from an :class:`EquationsOfMotion`.

One model per system, named as the system. Every coordinate is a variable of the same name and
every velocity a variable ``der_<name>``, with ``der(<name>) = der_<name>``. Two forms exist:

* the multiplier DAE (``lagrange``, ``nielsen``): ``M der(der_q) - A^T lambda = f`` with the
  constraints either at acceleration level (index 1, optionally Baumgarte-stabilised; what nhbridge
  simulates) or as given (positions and velocities; the Modelica tool reduces the index);
* the reduced ODE (``maggi``, ``appell``, ``chaplygin``): the independent velocities are states and
  the dependent ones follow from the kinematic relations.

The mass-matrix system stays implicit (scalar equations ``sum_j M_ij der(u_j) = F_i``); it is
never inverted symbolically. Expressions go through :class:`ModelicaCodePrinter` after one joint
common-subexpression pass whose temporaries are protected variables ``nhb_cse<k>``. With
``accelerations="variables"`` the accelerations become algebraic variables ``der_der_<name>`` with
``der(der_<name>) = der_der_<name>`` (a semi-explicit text of the same equations, which some
solvers handle better).

:func:`model_source` returns the text, :func:`write_model` (``bridge.write_modelica``) writes a ``.mo`` file and
:func:`write_package` a package folder.

Examples
--------
>>> import bridge
>>> system = bridge.parse_system('''
... name = "Oscillator"
... [coordinates]
... x = { start = 0.1, velocity = 0.0, unit = "m" }
... [parameters]
... m = { value = 2.0, unit = "kg" }
... k = { value = 8.0, unit = "N/m" }
... [energy]
... kinetic = "1/2*m*der(x)^2"
... potential = "1/2*k*x^2"
... ''')
>>> text = bridge.modelica_export.model_source(bridge.derive(system))
>>> text.splitlines()[0]
'model Oscillator "Oscillator"'
>>> [line.strip() for line in text.splitlines() if line.lstrip().startswith("parameter")]
['parameter Real m(unit="kg") = 2.0 "m";', 'parameter Real k(unit="N/m") = 8.0 "k";']
>>> print(text[text.index("equation"):text.index("  annotation")].rstrip())
equation
  // kinematics
  der(x) = der_x;
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  der(der_x)*m = -k*x;
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import sympy as sp

from ..atomic import write_text
from ..codegen.numbers import value_literal as _num
from ..codegen.strings import modelica_block_text, modelica_text  # importable from here
from ..derivation.eom import EquationsOfMotion
from ..derivation.methods import METHODS
from ..errors import ExportError
from ..model import symbols as S
from ..model.system import Coordinate
from ..version import __version__
from . import dimensions as _dimensions
from . import documentation as _documentation
from . import ports as _ports
from . import switched as _switched
from .dimensions import acceleration_unit, velocity_unit
from .printer import ModelicaCodePrinter
from .printer import modelica_ident as _ident

LEVELS = ("index1", "given", "auto")
#: how accelerations appear: implicitly as der(der_q) in M*der(v) = f, or as algebraic variables der_der_q;
#: "auto" (as level "auto"): the form :func:`bridge.modelica.forms.choose_form` picks for the equations
ACCELERATION_FORMS = ("implicit", "variables", "auto")


@dataclass(frozen=True)
class ModelicaModel:
    """The text of one model and the names a checker needs."""

    name: str
    source: str
    level: str
    method: str


_quote = modelica_text


def _modifiers(**items) -> str:
    parts = [f"{k}={v}" for k, v in items.items() if v not in (None, "")]
    return f"({', '.join(parts)})" if parts else ""


def _unit(unit: str) -> str | None:
    return f'"{_quote(unit)}"' if unit else None


def linear_in_states(expr, coordinates: Sequence[Coordinate]) -> bool:
    """Return whether an expression contains a velocity and is linear in the coordinates and velocities.

    Parameters
    ----------
    expr : sympy expression
        The expression, in the coordinates' symbols and velocity symbols.
    coordinates : sequence of Coordinate
        The system's coordinates.

    Returns
    -------
    bool
        True when every derivative of ``expr`` by a coordinate or velocity is free of all of them, and at
        least one velocity appears (``der_phi - n*der_theta``; not ``cos(theta)*der_x``).
    """
    expr = sp.sympify(expr)
    states = {c.symbol for c in coordinates} | {c.velocity_symbol for c in coordinates}
    velocities = {c.velocity_symbol for c in coordinates}
    present = expr.free_symbols & states
    if not present & velocities:
        return False
    return all(not (sp.diff(expr, s).free_symbols & states) for s in present)


class ModelicaWriter:
    """Writes the model text for one set of equations."""

    msl: bool = False  # ports as the MSL's flanges, else the local copies (bridge.modelica.ports)

    def __init__(self, eom: EquationsOfMotion, level: str = "auto", cse: bool = True,
                 accelerations: str = "auto", rename: Mapping[str, str] | None = None):
        if level not in LEVELS:
            raise ExportError(f"unknown constraint level {level!r}; choose one of {', '.join(LEVELS)}")
        if accelerations not in ACCELERATION_FORMS:
            raise ExportError(f"unknown acceleration form {accelerations!r}; choose one of "
                              f"{', '.join(ACCELERATION_FORMS)}")
        from ..modelica.forms import resolve

        eom, level, accelerations, self.form_reason = resolve(eom, level, accelerations)  # "auto": chosen form
        self.accelerations = accelerations
        self.rename = dict(rename or {})  # a user name -> the name in the model text (a backend's own scheme)
        if level == "given" and not eom.multipliers and eom.system.m:
            level = "index1"  # a reduced ODE has no constraint equations to keep
        self.eom = eom
        self.level = level
        self.cse = cse
        system = eom.system
        names: dict[sp.Symbol, str] = {}
        for c in system.coordinates:
            names[c.symbol] = self.ident(c.name)
            names[c.velocity_symbol] = self.velocity(c.name)
            names[c.acceleration_symbol] = (self.acceleration(c.name) if accelerations == "variables"
                                            else f"der({self.velocity(c.name)})")
        for q in (*system.parameters, *system.inputs):
            names[q.symbol] = self.ident(q.name)
        for k, lam in enumerate(eom.multipliers):
            names[lam] = f"lambda[{k + 1}]"
        for eff in (*system.efforts, *_switched.elements(system)):  # efforts, friction forces, diode voltages
            names[eff.symbol] = self.ident(eff.name)
        for k, z in enumerate(eom.auxiliary_symbols):
            names[z] = f"nhb_split{k + 1}"  # the split's placeholders (B, beta, B', beta'), solved by the tool
        names.update(_ports.flow_names(eom, self.ident))  # the ports' flows in the dynamic rows
        self.printer = ModelicaCodePrinter(names)

    def code(self, expr) -> str:
        """Return the Modelica text of an expression with the model's variable names.

        Parameters
        ----------
        expr : sympy.Expr
            The expression.

        Returns
        -------
        str
            Its Modelica text.
        """
        return self.printer.doprint(expr)

    # -- identifiers: one spelling of every user name in declarations and equations ----------------------
    def ident(self, name: str) -> str:
        """Return the Modelica identifier of a user name (renamed for a backend, quoted where Modelica reserves it)."""
        return _ident(self.rename.get(name, name))

    def velocity(self, name: str) -> str:
        """Return the velocity variable ``der_<name>`` of a coordinate."""
        return _ident("der_" + self.rename.get(name, name))

    def acceleration(self, name: str) -> str:
        """Return the acceleration variable ``der_der_<name>`` of a coordinate (``accelerations="variables"``)."""
        return _ident("der_der_" + self.rename.get(name, name))

    # -- pieces ---------------------------------------------------------------------
    def _dynamics(self) -> tuple[list[sp.Expr], list[sp.Expr], list[tuple[sp.Symbol, sp.Expr]]]:
        """Return the rows ``lhs = rhs`` of the dynamic equations, after one joint CSE pass over M and F.

        The CSE covers the mass-matrix coefficients only, so that the unknowns stay visible in the
        equations; its temporaries are scalars ``nhb_cse<k>`` (Rumoca 0.9 mis-matches arrays of
        algebraic variables).
        """
        eom = self.eom
        n_rows = len(eom.u) if self.level == "given" else eom.mass_matrix.shape[0]  # "given": constraints as written
        x = list(eom.unknowns)
        ncols = len(x)
        forcing = [f + g for f, g in zip(eom.forcing[:n_rows], _ports.port_forces(eom, n_rows))]  # + flange flows
        exprs = [eom.mass_matrix[i, j] for i in range(n_rows) for j in range(ncols)] + forcing
        repl: list[tuple[sp.Symbol, sp.Expr]] = []
        if self.cse:
            repl, exprs = sp.cse(exprs, symbols=sp.numbered_symbols("nhb_cse", start=1), order="canonical")
        lhs = [sum((exprs[i * ncols + j] * x[j] for j in range(ncols) if exprs[i * ncols + j] != 0), sp.Integer(0))
               for i in range(n_rows)]
        return lhs, list(exprs[n_rows * ncols:]), repl

    def _fixed(self) -> set[str]:
        """Return the names whose start values are fixed: all, except dependent ones when constraints stay as given."""
        system = self.eom.system
        names = {c.name for c in system.coordinates} | {f"der_{c.name}" for c in system.coordinates}
        if self.level != "given" or not system.m:
            return names
        from ..model.mechanics import choose_independent

        ind = choose_independent(system, self.eom.constraint_jacobian.tolist()) or ()
        keep = {system.coordinates[i].name for i in ind}
        dep_pos = set()
        if system.holonomic:  # positions determined by the holonomic constraints
            hol_dep = [c.name for i, c in enumerate(system.coordinates) if i not in ind][: len(system.holonomic)]
            dep_pos = set(hol_dep)
        return ({c.name for c in system.coordinates} - dep_pos) | {f"der_{n}" for n in keep}

    def _speeds(self) -> set[str]:
        """Return the names of the coordinates whose velocities are independent (states)."""
        return {S.base_name(s) for s in self.eom.u}

    def _acceleration_variables(self) -> list[Coordinate]:
        """Return the coordinates with an algebraic acceleration variable ``der_der_<name>``."""
        if self.accelerations != "variables":
            return []
        speeds = self._speeds()
        return [c for c in self.eom.system.coordinates if c.name in speeds]

    def _head(self, within: str | None) -> list[str]:
        """Return the optional ``within`` clause and the model line with the description."""
        system = self.eom.system
        out = [] if within is None else [f"within {within};" if within else "within;"]
        return [*out, f'model {_ident(system.name)} "{_quote(system.description or system.name)}"']

    def _parameter_and_input_declarations(self) -> list[str]:
        """Declare each ``parameter Real`` with value and ``input Real`` with start value, unit and description."""
        system = self.eom.system
        out = ["  // parameters"] if system.parameters else []
        for p in system.parameters:
            out.append(f"  parameter Real {self.ident(p.name)}{_modifiers(unit=_unit(p.unit))} = {_num(p.value)}"
                       f' "{_quote(p.description or p.name)}";')
        if system.inputs:
            out.append("  // inputs")
        for u in system.inputs:
            out.append(f"  input Real {self.ident(u.name)}{_modifiers(start=_num(u.start), unit=_unit(u.unit))}"
                       f' "{_quote(u.description or u.name)}";')
        return out

    def _coordinate_declarations(self, fixed: set[str]) -> list[str]:
        """Return the generalized coordinates with start value, fixed, unit and nominal value."""
        out = ["  // generalized coordinates"]
        for c in self.eom.system.coordinates:
            mods = _modifiers(start=_num(c.start), fixed=str(c.name in fixed).lower(), unit=_unit(c.unit),
                              nominal=_num(c.nominal) if c.nominal else None)
            out.append(f"  Real {self.ident(c.name)}{mods}"
                       f' "{_quote(c.description or c.name)}";')
        return out

    def _velocity_declarations(self, fixed: set[str]) -> list[str]:
        """Return the velocities ``der_<name>`` (a dependent one without start value) and acceleration variables."""
        out = ["  // generalized velocities"]
        speeds = self._speeds()
        for c in self.eom.system.coordinates:
            v = f"der_{c.name}"
            ident = self.velocity(c.name)
            if c.name in speeds:
                mods = _modifiers(start=_num(c.velocity), fixed=str(v in fixed).lower(),
                                  unit=_unit(velocity_unit(c.unit)))
                what = "velocity"
            else:
                mods = _modifiers(unit=_unit(velocity_unit(c.unit)))
                what = "dependent velocity, from the constraints"
            out.append(f'  Real {ident}{mods} "{what} der({c.name})";')
        for c in self._acceleration_variables():
            out.append(f'  Real {self.acceleration(c.name)}{_modifiers(unit=_unit(acceleration_unit(c.unit)))} '
                       f'"acceleration der(der({c.name}))";')
        return out

    def _result_declarations(self) -> list[str]:
        """Return the multipliers ``lambda``, the outputs and the constraint residuals."""
        eom, system = self.eom, self.eom.system
        out = []
        if eom.multipliers:
            out.append(f'  Real lambda[{len(eom.multipliers)}] "constraint multipliers: generalized constraint '
                       'forces A^T*lambda";')
        for name in system.outputs:
            unit = _modifiers(unit=_unit(system.output_units.get(name, "")))
            text = _quote(system.output_descriptions.get(name, f"output {name}"))
            out.append(f'  output Real {self.ident(name)}{unit} "{text}";')
        if system.m:
            out.append(f'  Real residual[{system.m}] "constraint residuals at velocity level (holonomic ones '
                       'differentiated); stay near 0";')
        for eff in system.efforts:
            text = _quote(eff.description or eff.name)
            out.append(f'  Real {self.ident(eff.name)}{_modifiers(unit=_unit(eff.unit))} "effort: {text}";')
        return out + _switched.declarations(self)

    def _effort_equations(self) -> list[str]:
        """Return the effort constraints ``Gamma(q, der(q), e, s, t) = 0`` (seed eq. 4.4) as written, kept algebraic."""
        efforts = self.eom.system.efforts
        _switched.check_exportable(self.eom)
        if not efforts:
            return _switched.equations(self)
        out = ["  // effort constraints Gamma(q, der(q), e, s, t) = 0, kept algebraic (solved with the accelerations)"]
        for eff in efforts:
            out += [f"  // efforts.{eff.name}", f"  {self.code(eff.constraint)} = 0;"]
        return out + _switched.equations(self)

    @staticmethod
    def _cse_declarations(repl: list[tuple[sp.Symbol, sp.Expr]]) -> list[str]:
        """Return the protected scalar temporaries ``nhb_cse<k>`` of the common subexpressions."""
        if not repl:
            return []
        return ["protected"] + [f'  Real nhb_cse{k + 1} "common subexpression";' for k in range(len(repl))]

    def _auxiliary_declarations(self, protected: bool) -> list[str]:
        """Return the protected scalars ``nhb_split<k>`` of the reduced methods' implicit split (B, beta, B', beta')."""
        symbols = self.eom.auxiliary_symbols
        if not symbols:
            return []
        return ([] if protected else ["protected"]) + [f'  Real {self.code(z)} "{_quote(str(z))} of the split";'
                                                       for z in symbols]

    def _auxiliary_equations(self) -> list[str]:
        """Return ``A_dep [B, beta] = -[A_ind, a0]`` and its time derivative as linear equations (never solved here)."""
        eom = self.eom
        if not eom.auxiliary:
            return []
        out = ["  // the split, kept implicit: A_dep*[B, beta] = -[A_ind, a0] and its time derivative"]
        for stage in eom.auxiliary:
            L, Z, R = stage.matrix, stage.unknowns, stage.rhs
            for i in range(Z.shape[0]):
                for j in range(Z.shape[1]):
                    lhs = sp.Add(*[L[i, k] * Z[k, j] for k in range(L.shape[1]) if L[i, k] != 0])
                    out.append(f"  {self.code(lhs)} = {self.code(R[i, j])};")
        return out

    def _kinematic_equations(self) -> list[str]:
        """Return ``der(q) = der_q``, ``der(der_q) = der_der_q`` and the dependent velocities from the constraints."""
        eom, system = self.eom, self.eom.system
        out = ["  // kinematics"]
        out += [f"  der({self.ident(c.name)}) = {self.velocity(c.name)};" for c in system.coordinates]
        out += [f"  der({self.velocity(c.name)}) = {self.acceleration(c.name)};"
                for c in self._acceleration_variables()]
        if eom.is_reduced and eom.dependent:
            out.append(f"  // dependent velocities: kinematic relations solved from the constraints "
                       f"(independent: {', '.join(eom.independent)})")
            for i, c in enumerate(system.coordinates):
                if c.name in eom.dependent:
                    out.append(f"  {self.velocity(c.name)} = {self.code(eom.kinematics[i])};")
        return out

    def _cse_equations(self, repl: list[tuple[sp.Symbol, sp.Expr]]) -> list[str]:
        """Return ``nhb_cse<k> = expression`` for every common subexpression."""
        if not repl:
            return []
        return ["  // common subexpressions"] + [f"  {self.code(sym)} = {self.code(expr)};" for sym, expr in repl]

    def _dynamic_equations(self, lhs: list[sp.Expr], rhs: list[sp.Expr]) -> list[str]:
        """Return the rows of ``M * accelerations = forcing`` for the independent velocities."""
        method = METHODS[self.eom.method]
        out = [f"  // dynamics: {method.title} (mass matrix * accelerations = forcing)"]
        return out + [f"  {self.code(lhs[i])} = {self.code(rhs[i])};" for i in range(len(self.eom.u))]

    def _constraint_equations(self, lhs: list[sp.Expr], rhs: list[sp.Expr]) -> list[str]:
        """Return the constraints of a multiplier DAE.

        As given, or at acceleration level (the rows after the dynamics).
        """
        eom, system = self.eom, self.eom.system
        if not eom.multipliers:
            return []
        if self.level == "given":
            out = ["  // constraints as given (the Modelica tool differentiates them as needed)"]
            for entry, expr in system.constraints:
                out += [f"  // {entry}", f"  {self.code(expr)} = 0;"]
            return out
        stab = f", Baumgarte alpha = {eom.baumgarte[0]:g}, beta = {eom.baumgarte[1]:g}" if eom.baumgarte else ""
        out = [f"  // constraints at acceleration level (index 1{stab})"]
        names = [entry for entry, _ in system.constraints]
        n_dyn = len(eom.u)
        for k in range(len(eom.multipliers)):
            out += [f"  // {names[k]}", f"  {self.code(lhs[n_dyn + k])} = {self.code(rhs[n_dyn + k])};"]
        return out

    def _residual_and_output_equations(self) -> list[str]:
        """Return ``residual[k] = g_k`` (velocity level) and ``y = expression`` for every output."""
        system = self.eom.system
        out = []
        if system.m:
            out.append("  // constraint residuals (velocity level)")
            out += [f"  residual[{k + 1}] = {self._linear_in_states_code(g)};"
                    for k, g in enumerate(system.velocity_constraints())]
        if system.outputs:
            out.append("  // outputs")
            out += [f"  {self.ident(name)} = {self._output_code(expr)};" for name, expr in system.outputs.items()]
        return out

    #: outputs written with der(q) for the velocities; False for Rumoca's FMU code generator, whose output
    #: function evaluates der(q) of an output equation as 0 (the velocity variables der_q give the right values)
    outputs_via_der = True

    def _output_code(self, expr) -> str:
        """Return an output's expression with every velocity written ``der(q)`` (the same value).

        Rumoca 0.9 fails on an output linear in a velocity state ``der_q``
        (docs/compiler-defects/RumocaLinearOutputOfState.mo).
        """
        if not self.outputs_via_der:
            return self.code(expr)
        names = {c.velocity_symbol: f"der({self.ident(c.name)})" for c in self.eom.system.coordinates}
        return ModelicaCodePrinter({**self.printer.names, **names}).doprint(expr)

    def _linear_in_states_code(self, expr) -> str:
        """Return a residual's expression, its velocities written ``der(q)`` where it is linear in the states.

        Rumoca 0.9 takes an equation linear in the states (every coefficient free of coordinates and
        velocities, such as a gear's ``der_phi - n*der_theta``) as one defining a state and reports the model
        structurally singular (docs/compiler-defects/RumocaLinearOutputOfState.mo); ``der(q)`` is the same value
        and keeps the equation for the variable it defines. Any other expression is printed as it is.
        """
        if not self.outputs_via_der or not linear_in_states(expr, self.eom.system.coordinates):
            return self.code(expr)
        return self._output_code(expr)

    def _annotation(self) -> list[str]:
        """Return the model's annotations: the experiment and the documentation.

        The experiment has the file's [simulation] stop time, interval and rtol (defaults 1000 intervals and tolerance
        1e-8).
        """
        system = self.eom.system
        stop = system.stop_time
        interval = system.interval if system.interval is not None and system.interval <= stop else stop / 1000
        tolerance = _num(system.rtol) if system.rtol is not None else "1e-08"
        uses = _ports.uses_annotation(self.eom, self.msl)
        return ["  annotation(", *([f"    {uses},"] if uses else []),
                f"    experiment(StopTime={_num(stop)}, Interval={_num(interval)}, Tolerance={tolerance}),",
                f'    Documentation(info="{modelica_block_text(self.documentation())}"));']

    def source(self, within: str | None = None) -> str:
        """Return the model text; ``within`` adds a within clause (``""``: the top level)."""
        lhs, rhs, repl = self._dynamics()
        fixed = self._fixed()
        declarations = [*self._parameter_and_input_declarations(), *self._coordinate_declarations(fixed),
                        *self._velocity_declarations(fixed), *self._result_declarations(),
                        *self._cse_declarations(repl), *self._auxiliary_declarations(bool(repl))]
        equations = [*self._auxiliary_equations(), *self._kinematic_equations(), *self._cse_equations(repl),
                     *self._dynamic_equations(lhs, rhs),
                     *self._constraint_equations(lhs, rhs), *self._effort_equations(),
                     *self._residual_and_output_equations()]
        declarations, equations = _ports.with_ports(self, declarations, equations)
        declarations = _dimensions.with_units(self, declarations, repl)  # units of lambda, residual, ...
        out = [*self._head(within), *declarations, "equation", *equations, *self._annotation(),
               f"end {_ident(self.eom.system.name)};"]
        return "\n".join(out) + "\n"

    def documentation(self) -> str:
        """Return the HTML of the model's ``Documentation`` annotation.

        The system's description, the method and its equations, the form of the export and the reason it was chosen.

        Returns
        -------
        str
            The HTML text (escaped; not yet a Modelica string literal).
        """
        eom, system = self.eom, self.eom.system
        method = METHODS[eom.method]
        level = ("as given (index reduction by the tool)" if self.level == "given"
                 else "at acceleration level (index 1)")
        form = ("reduced ODE in the independent velocities " + ", ".join(eom.independent)
                if eom.is_reduced else "multiplier DAE, constraints " + level)

        def esc(text: str) -> str:
            return html.escape(text, quote=False)

        lines = [
            f"<p>{esc(system.description or system.name)}</p>",
            f"<p>Equations of motion derived by nhbridge {__version__} with <b>{esc(method.title)}</b>"
            f" (method <code>{eom.method}</code>): {esc(form)}.</p>",
            "<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;"
            "</code>; <code>residual</code> monitors the constraints.</p>",
        ]
        if system.inputs:
            lines.append("<p>Inputs: " + ", ".join(esc(u.name) for u in system.inputs) + ".</p>")
        if self.form_reason:
            lines.append(f"<p>Export form (chosen automatically): {esc(self.form_reason)}.</p>")
        lines += _documentation.equations_html(self.eom, self.level)  # T, V, D, Q, constraints, ports, form
        lines += _switched.documentation(self.eom)  # friction and diodes: their laws and modes
        return "\n".join(["<html>", *lines, "</html>"])  # as the MSL writes info


def model_source(eom: EquationsOfMotion, level: str = "auto", within: str | None = None,
                 accelerations: str = "auto", rename: Mapping[str, str] | None = None, msl: bool = False,
                 outputs_via_der: bool = True) -> str:
    """Return the Modelica text of ``eom``.

    ``rename`` maps user names to the names a backend needs in the text (descriptions keep the user's names);
    ``outputs_via_der``: see :attr:`ModelicaWriter.outputs_via_der`.
    """
    writer = ModelicaWriter(eom, level, accelerations=accelerations, rename=rename)
    writer.msl = msl  # ports: the MSL's flanges (True) or the local copies in NHBridge
    writer.outputs_via_der = outputs_via_der
    return writer.source(within)


def write_model(eom: EquationsOfMotion, path: str | Path, level: str = "auto",
                msl: bool = False) -> Path:
    """Write the Modelica model of ``eom`` to a ``.mo`` file, atomically.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations of motion to export.
    path : str or pathlib.Path
        The file to write; it must end in ``.mo``.
    level : str, optional
        The constraint level of a multiplier DAE: ``"given"`` (index reduction by the tool), ``"index1"``
        (acceleration level) or ``"auto"`` (the form a compiler can simulate, see :func:`choose_form`).
    msl : bool, optional
        Use the Modelica Standard Library's connectors and units.

    Returns
    -------
    pathlib.Path
        The written file.

    Raises
    ------
    ExportError
        When the file name does not end in ``.mo`` or cannot be written.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import bridge
    >>> system = bridge.parse_system('''
    ... name = "Oscillator"
    ... [coordinates]
    ... x = { start = 0.1, velocity = 0.0, unit = "m" }
    ... [parameters]
    ... m = { value = 2.0, unit = "kg" }
    ... k = { value = 8.0, unit = "N/m" }
    ... [energy]
    ... kinetic = "1/2*m*der(x)^2"
    ... potential = "1/2*k*x^2"
    ... ''')
    >>> eom = bridge.derive(system, "lagrange")
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = bridge.write_modelica(eom, Path(folder) / "Oscillator.mo")
    ...     text = path.read_text()
    >>> path.name
    'Oscillator.mo'
    >>> text.splitlines()[0].startswith("model Oscillator")
    True
    >>> "end Oscillator;" in text
    True
    """
    path = Path(path)
    if path.suffix != ".mo":
        raise ExportError(f"{path}: a Modelica file must end in .mo")
    return write_text(path, model_source(eom, level, msl=msl))


def package_files(eoms: Sequence[EquationsOfMotion], package: str, level: str = "auto",
                  description: str = "Nonholonomic mechanical systems exported by nhbridge",
                  msl: bool = False, sources: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return file name -> text of a Modelica package: package.mo, package.order and one file per model.

    ``sources`` (system name -> model text, ``within`` the package) replaces :func:`model_source`'s text of those
    systems (the re-partitioning text of ``nhbridge modelica --target rumoca``).
    """
    names = [e.system.name for e in eoms]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ExportError(f"two systems have the same name {', '.join(dupes)}; a package needs unique names")
    files = {
        "package.mo": (f'within;\npackage {package} "{_quote(description)}"\n  annotation(Documentation(info='
                       f'"<html><p>{_quote(html.escape(description, quote=False))}; generated by nhbridge '
                       f'{__version__}.</p></html>"));\nend {package};\n'),
        "package.order": "".join(f"{n}\n" for n in names),
    }
    for eom in eoms:
        given = (sources or {}).get(eom.system.name)
        files[f"{eom.system.name}.mo"] = given if given is not None else model_source(eom, level, within=package,
                                                                                      msl=msl)
    return files


def write_package(eoms: Sequence[EquationsOfMotion], directory: str | Path, package: str,
                  level: str = "auto", msl: bool = False, sources: Mapping[str, str] | None = None) -> Path:
    """Write the package folder ``directory/package`` as a whole.

    Staged beside it and swapped in at once (:func:`bridge.atomic.atomic_folder`), so a reader or a killed run never
    sees a mix of two exports. An existing folder is replaced; one holding other files than ``*.mo`` and
    ``package.order`` is refused. ``sources``: as :func:`package_files`.
    """
    from ..atomic import atomic_folder

    files = package_files(eoms, package, level, msl=msl, sources=sources)
    target = Path(directory) / package
    if target.is_dir():
        foreign = sorted(p.name for p in target.iterdir() if p.suffix != ".mo" and p.name != "package.order")
        if foreign:
            raise ExportError(f"{target}: the folder holds other files than a Modelica package ({', '.join(foreign)})"
                              "; it would be replaced as a whole; choose another --package name or output folder")
    with atomic_folder(target) as staging:
        for name, text in files.items():
            write_text(staging / name, text)
    return target
