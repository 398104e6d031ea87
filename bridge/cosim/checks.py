"""Checks of a scenario against its FMUs, all before the run; and the Gauss-Seidel order.

Everything found is reported at once (one paragraph per problem, with the fix):

- every component has a Co-Simulation interface (FMI 2.0 or 3.0);
- parameters and start values name variables that may be set before initialization;
- a connection goes from an output to an input, both Real, in compatible units (see :mod:`.units`),
  and each input has at most one source;
- there is no algebraic loop: the graph with an edge for every connection (output -> input) and for
  every direct feedthrough inside a component (input -> output) has no cycle; the master exchanges
  values once per communication point and cannot iterate a loop to convergence;
- with an adaptive step, every component can undo a step and accepts variable steps.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from ..errors import ProblemCollector
from ..model.units import compatible
from .components import REAL_TYPES, ModelInfo
from .errors import CosimError
from .scenario import Connection, Scenario, split_signal


@dataclass(frozen=True)
class Plan:
    """A scenario whose components and connections have been checked against the FMUs."""

    scenario: Scenario
    infos: dict[str, ModelInfo]          # component name -> its FMU
    order: tuple[str, ...]               # Gauss-Seidel order
    record: tuple[str, ...]              # recorded signals "component.variable"


def _suggest(name: str, candidates: list[str], what: str) -> str:
    close = difflib.get_close_matches(name, candidates, n=2)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    shown = ", ".join(candidates[:12]) + (", ..." if len(candidates) > 12 else "")
    return f"its {what} are: {shown}" if candidates else f"it has no {what}"


def _check_component(pc: ProblemCollector, name: str, info: ModelInfo) -> bool:
    entry = f"components.{name}"
    if info.fmi_version not in (2, 3):
        pc.add(entry, f"{info.path.name} is an FMI {info.fmi_version}.0 FMU; the master runs FMI 2.0 and 3.0",
               "export the model as FMI 2.0 or 3.0")
        return False
    if not info.co_simulation:
        pc.add(entry, f"{info.path.name} has no Co-Simulation interface (Model Exchange only)",
               "export the model as a Co-Simulation FMU (nhbridge fmu builds both)")
        return False
    return True


def _check_values(pc: ProblemCollector, scenario: Scenario, name: str, info: ModelInfo) -> None:
    spec = scenario.component(name)
    for var, _ in spec.parameters:
        v = info.variables.get(var)
        entry = f"components.{name}.parameters.{var}"
        if v is None:
            params = [n for n, x in info.variables.items() if x.causality == "parameter"]
            pc.add(entry, f"{name} has no variable {var!r}", _suggest(var, params, "parameters"))
        elif v.causality != "parameter" or v.variability in ("constant",):
            pc.add(entry, f"{name}.{var} is not a parameter (causality {v.causality})",
                   "set start values of states and inputs under start = { ... }")
        elif v.type not in REAL_TYPES:
            pc.add(entry, f"{name}.{var} is of type {v.type}; only Real parameters can be set", "remove it")
    for var, _ in spec.start:
        v = info.variables.get(var)
        entry = f"components.{name}.start.{var}"
        if v is None:
            pc.add(entry, f"{name} has no variable {var!r}", _suggest(var, list(info.variables), "variables"))
        elif v.causality == "parameter":
            pc.add(entry, f"{name}.{var} is a parameter", "set it under parameters = { ... }")
        elif not (v.causality == "input" or v.initial in ("exact", "approx")):
            pc.add(entry, f"{name}.{var} has no settable start value (causality {v.causality}, initial "
                   f"{v.initial or 'calculated'})", "set a state, an input or a parameter instead")


def _check_connection(pc: ProblemCollector, conn: Connection, infos: dict[str, ModelInfo]) -> bool:
    src, dst = infos.get(conn.source), infos.get(conn.target)
    if src is None or dst is None:
        return False
    ok = True
    out, inp = src.variables.get(conn.output), dst.variables.get(conn.input)
    if out is None:
        pc.add(conn.entry, f"{conn.text}: {conn.source} has no variable {conn.output!r}",
               _suggest(conn.output, src.outputs(), "outputs"))
        ok = False
    elif out.causality != "output":
        what = "an input" if out.causality == "input" else f"not an output (causality {out.causality})"
        hint = ("a connection goes from an output to an input; did you swap the two ends?"
                if out.causality == "input" else _suggest(conn.output, src.outputs(), "outputs"))
        pc.add(conn.entry, f"{conn.text}: {conn.source}.{conn.output} is {what}", hint)
        ok = False
    if inp is None:
        pc.add(conn.entry, f"{conn.text}: {conn.target} has no variable {conn.input!r}",
               _suggest(conn.input, dst.inputs(), "inputs"))
        ok = False
    elif inp.causality != "input":
        what = "an output: an output cannot be connected to an output" if inp.causality == "output" else \
            f"not an input (causality {inp.causality})"
        pc.add(conn.entry, f"{conn.text}: {conn.target}.{conn.input} is {what}",
               f"connect to an input of {conn.target}; " + _suggest(conn.input, dst.inputs(), "inputs"))
        ok = False
    if not ok:
        return False
    for v, comp in ((out, conn.source), (inp, conn.target)):
        if v.type not in REAL_TYPES:
            pc.add(conn.entry, f"{conn.text}: {comp}.{v.name} is of type {v.type}; only Real signals can be "
                   "connected", "connect Real variables")
            ok = False
    if ok and out.unit and inp.unit and not conn.ignore_units and not compatible(out.unit, inp.unit):
        pc.add(conn.entry, f"{conn.text}: unit mismatch: {conn.source}.{conn.output} is in {out.unit!r}, "
               f"{conn.target}.{conn.input} in {inp.unit!r}",
               "connect variables in the same unit, or convert with gain/offset and set ignore_units = true")
        ok = False
    return ok


def find_loop(connections: list[Connection], infos: dict[str, ModelInfo]) -> list[str] | None:
    """Return a cycle of the feedthrough graph as a list of signals (first = last), or None."""
    edges: dict[str, list[str]] = {}
    for c in connections:
        edges.setdefault(f"{c.source}.{c.output}", []).append(f"{c.target}.{c.input}")
    connected_inputs = {(c.target, c.input) for c in connections}
    for name, info in infos.items():
        for out, ins in info.feedthrough.items():
            for i in ins:
                if (name, i) in connected_inputs:
                    edges.setdefault(f"{name}.{i}", []).append(f"{name}.{out}")
    colour: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        colour[node] = 1
        stack.append(node)
        for nxt in edges.get(node, []):
            if colour.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in colour:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        colour[node] = 2
        return None

    for node in list(edges):
        if node not in colour:
            found = visit(node)
            if found:
                return found
    return None


def gauss_seidel_order(names: list[str], connections: list[Connection], infos: dict[str, ModelInfo]) -> tuple[str, ...]:
    """Order the components so that, where possible, a component steps after those whose outputs it reads.

    Edges into an input with direct feedthrough come first (the consumer's output then sees the fresh
    value); the other edges are added in the order of the connections as long as they close no cycle.
    Components that remain in a cycle keep their declaration order.
    """
    feeds = {(n, i) for n, info in infos.items() for ins in info.feedthrough.values() for i in ins}
    strong = [c for c in connections if (c.target, c.input) in feeds and c.source != c.target]
    weak = [c for c in connections if (c.target, c.input) not in feeds and c.source != c.target]
    succ: dict[str, set[str]] = {n: set() for n in names}

    def reaches(a: str, b: str) -> bool:
        seen, todo = set(), [a]
        while todo:
            x = todo.pop()
            if x == b:
                return True
            if x not in seen:
                seen.add(x)
                todo.extend(succ[x])
        return False

    for c in strong + weak:
        if c.target not in succ[c.source] and not reaches(c.target, c.source):
            succ[c.source].add(c.target)
    indeg = {n: 0 for n in names}
    for n in names:
        for m in succ[n]:
            indeg[m] += 1
    order: list[str] = []
    remaining = list(names)
    while remaining:
        ready = [n for n in remaining if indeg[n] == 0] or remaining[:1]
        n = ready[0]
        remaining.remove(n)
        order.append(n)
        for m in succ[n]:
            indeg[m] -= 1
    return tuple(order)


def _name_problems(pc: ProblemCollector, scenario: Scenario) -> None:
    """Check the component names: unique, and every name a connection, a recorded signal or the order uses exists."""
    names = [c.name for c in scenario.components]
    known = sorted(set(names))
    hint = f"components are: {', '.join(known) or 'none'}"
    for name in sorted({n for n in names if names.count(n) > 1}):
        pc.add(f"components.{name}", f"the component name {name!r} is used {names.count(name)} times",
               "give every component its own name")
    for conn in scenario.connections:
        for comp in dict.fromkeys((conn.source, conn.target)):
            if comp not in known:
                pc.add(conn.entry, f"{conn.text}: no component {comp!r}", hint)
    for r in scenario.record:
        parsed = split_signal(r)
        if parsed and parsed[0] not in known:
            pc.add("record", f"{r!r}: no component {parsed[0]!r}", hint)
    order = scenario.master.order
    if order and sorted(order) != sorted(known):
        pc.add("master.order", f"{', '.join(order)} must name every component exactly once", hint)


def check_names(scenario: Scenario) -> None:
    """Raise :class:`CosimError` when component names are duplicated or unknown names are used."""
    pc = ProblemCollector(scenario.source)
    _name_problems(pc, scenario)
    pc.raise_if_any(CosimError)


def check_scenario(scenario: Scenario, infos: dict[str, ModelInfo]) -> Plan:
    """Check the scenario against the FMUs; raise :class:`CosimError` with every problem found."""
    pc = ProblemCollector(scenario.source)
    _name_problems(pc, scenario)
    if pc.problems:
        pc.raise_if_any(CosimError)
    usable = {n: info for n, info in infos.items() if _check_component(pc, n, info)}
    for name, info in usable.items():
        _check_values(pc, scenario, name, info)
    good: list[Connection] = []
    seen_inputs: dict[tuple[str, str], Connection] = {}
    for conn in scenario.connections:
        if not _check_connection(pc, conn, usable):
            continue
        key = (conn.target, conn.input)
        if key in seen_inputs:
            pc.add(conn.entry, f"{conn.target}.{conn.input} already has a source ({seen_inputs[key].entry}: "
                   f"{seen_inputs[key].text})", "an input takes exactly one connection; remove one of them")
            continue
        seen_inputs[key] = conn
        good.append(conn)
    loop = find_loop(good, usable)
    if loop:
        pc.add("connections", "algebraic loop through direct feedthrough: " + " -> ".join(loop) +
               " (each step inside a component is an output that depends directly on an input)",
               "the master exchanges values once per communication step and cannot solve it; break the loop with "
               "a component that has a state between the signals (e.g. a first-order lag), or remove a connection")
    record = scenario.record or tuple(f"{n}.{o}" for n, info in usable.items() for o in info.outputs())
    for r in scenario.record:
        parsed = split_signal(r)
        if parsed and parsed[0] in usable and parsed[1] not in usable[parsed[0]].variables:
            pc.add("record", f"{r!r}: {parsed[0]} has no variable {parsed[1]!r}",
                   _suggest(parsed[1], list(usable[parsed[0]].variables), "variables"))
        elif parsed and parsed[0] in usable and usable[parsed[0]].variables[parsed[1]].type not in REAL_TYPES:
            pc.add("record", f"{r!r} is not a Real variable", "record Real variables only")
    master = scenario.master
    if master.adaptive:
        for name, info in usable.items():
            if info.rollback is None:
                pc.add(f"components.{name}", f"an adaptive step needs to undo steps, but {info.path.name} cannot save "
                       "its state (canGetAndSetFMUstate is false) and has states",
                       "use a fixed communication step (adaptive = false)")
            if not info.variable_step:
                pc.add(f"components.{name}", f"an adaptive step needs variable communication steps, but "
                       f"{info.path.name} declares canHandleVariableCommunicationStepSize = false",
                       "use a fixed communication step (adaptive = false)")
    pc.raise_if_any(CosimError)
    names = [c.name for c in scenario.components]
    order = master.order or gauss_seidel_order(names, good, usable)
    return Plan(scenario, dict(usable), tuple(order), tuple(record))
