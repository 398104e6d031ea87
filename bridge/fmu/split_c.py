"""The split-free part of a generated ``model.c`` (``fmu/nhb_split.c`` re-partitions with it).

For a reduced method (maggi, appell, chaplygin) with dependent velocities, ``model.c`` also defines
``NHB_REPARTITION = 1`` and, from :func:`bridge.derivation.split_free.split_free_form`:

- ``nhb_split_constraints``: ``A(q, t)`` (row-major, ``NHB_NRES x NHB_NQ``) and ``a0(q, t)``;
- ``nhb_split_dynamics``: at positions ``x[0..NQ)`` and all velocities ``v``: the inertia matrix ``M``
  (``NQ x NQ``), ``h = Q - r``, ``A'`` and ``a0'``;
- ``nhb_split_outputs``: the outputs and velocity residuals at (q, v);
- ``NHB_SPLIT_MAY_DEPEND`` and ``NHB_SPLIT_CYCLIC`` (per coordinate) for the runtime's choice of a split.

Each function is one CSE pass printed by the project's C99 printer. Other models get ``NHB_REPARTITION = 0``
and stubs that fail.
"""

from __future__ import annotations

from ..codegen.c import NhbCPrinter, assignment_parts, cse_parts
from ..codegen.c import c_assignments as _c_assignments
from ..codegen.c import c_names as _c_names
from ..codegen.c import cse_block as _cse_block
from ..derivation.eom import EquationsOfMotion
from ..derivation.split_free import repartitions, split_free_form

#: signature and unused-parameter line of each model function of ``fmu/nhb_model.h`` that a model may lack
_HEADS = {
    "nhb_constraints": ("int nhb_constraints(double t, const double *x, const double *p, const double *in, "
                        "double *phi, double *A,", "                    double *a0, char *msg, size_t msg_len)",
                        "(void)phi; (void)A; (void)a0;"),
    "nhb_switching": ("int nhb_switching(double t, const double *x, const double *p, const double *in, double *w, "
                      "double *limit,", "                  double *grad, char *msg, size_t msg_len)",
                      "(void)w; (void)limit; (void)grad;"),
    "nhb_split_constraints": ("int nhb_split_constraints(double t, const double *x, const double *p, const double *in, "
                              "double *A, double *a0,", "                          char *msg, size_t msg_len)",
                              "(void)A; (void)a0;"),
    "nhb_split_dynamics": ("int nhb_split_dynamics(double t, const double *x, const double *v, const double *p, "
                           "const double *in, double *M,", "                       double *h, double *A_dot, "
                           "double *a0_dot, char *msg, size_t msg_len)",
                           "(void)v; (void)M; (void)h; (void)A_dot; (void)a0_dot;"),
    "nhb_split_outputs": ("int nhb_split_outputs(double t, const double *x, const double *v, const double *p, "
                          "const double *in, double *y,", "                      double *r, char *msg, size_t msg_len)",
                          "(void)v; (void)y; (void)r;"),
}


def function_head(function: str) -> list[str]:
    """Return the signature of ``function``, its opening brace and the line that marks its parameters unused.

    ``function``: one of the model functions a model may lack (``nhb_constraints``, ``nhb_switching`` and the three
    ``nhb_split_*``); the generated code that follows the head may use the parameters.
    """
    first, second, unused = _HEADS[function]
    return [first, second, "{", f"    (void)t; (void)x; (void)p; (void)in; {unused}"]


def failing_body(message: str) -> list[str]:
    """Return the rest of a stub after :func:`function_head`: it fails with ``message`` (a C string literal's text)."""
    return [f'    snprintf(msg, msg_len, "{message}");', "    return 1;", "}", ""]


def _function(kind: str, body: list[str] | None) -> list[str]:
    """Return one of the three split functions; ``body`` None: a stub that fails."""
    lines = function_head(f"nhb_split_{kind}")
    if body is None:
        return lines + failing_body("the model does not re-partition")
    return [*lines, "    (void)msg; (void)msg_len;", *body, "    return 0;", "}", ""]


def _flags(values) -> str:
    return "{" + (", ".join(str(int(v)) for v in values) or "0") + "}"


def split_c_parts(eom: EquationsOfMotion) -> tuple[list[list[str]], list[str]]:
    """Return the C of a model's re-partition: the part functions of a large ``nhb_split_dynamics``, and the rest.

    The rest holds ``NHB_REPARTITION``, the coordinate flags and the three split-free functions (stubs when the
    model does not re-partition). The parts (:func:`~bridge.codegen.c.cse_parts`) may go into files of their own;
    their prototypes are in the rest.
    """
    if not repartitions(eom):
        return [], no_split_c()
    head = ["", "/* Split-free form of the reduced method (fmu/nhb_split.c re-partitions with it). */"]
    system = eom.system
    form = split_free_form(eom)
    names = _c_names(eom)
    for i, c in enumerate(system.coordinates):
        names[c.velocity_symbol] = f"v[{i}]"
    n, m = system.n, system.m
    temps, vals = _cse_block(NhbCPrinter(dict(names)), form.A + form.a0, "sc")
    constraints = [*temps, *_c_assignments("A", vals[:m * n]), *_c_assignments("a0", vals[m * n:])]
    params = ["double t", "const double *x", "const double *v", "const double *p", "const double *in"]
    block = cse_parts(NhbCPrinter(dict(names)), form.mass + form.rhs + form.A_dot + form.a0_dot, "sd",
                      "nhb_split_dynamics", params, ["t", "x", "v", "p", "in"])
    vals = block.values
    k = n * n
    fills, fill_prototypes, fill = assignment_parts(
        block, "nhb_split_dynamics", params, ["t", "x", "v", "p", "in"], "sd",
        [("M", vals[:k]), ("h", vals[k:k + n]), ("A_dot", vals[k + n:k + n + m * n]), ("a0_dot", vals[k + n + m * n:])])
    dynamics = [*block.body, *fill]
    ny = len(system.outputs)
    temps, vals = _cse_block(NhbCPrinter(dict(names)),
                             list(system.outputs.values()) + list(system.velocity_constraints()), "so")
    outputs = [*temps, *_c_assignments("y", vals[:ny]), *_c_assignments("r", vals[ny:ny + m])]
    return block.parts + fills, [
        *head,
        *block.prototypes,
        *fill_prototypes,
        "const int NHB_REPARTITION = 1;",
        f'const char *const NHB_SPLIT_METHOD = "{eom.method}";',
        f"const int NHB_SPLIT_MAY_DEPEND[] = {_flags(form.may_be_dependent)};",
        f"const int NHB_SPLIT_CYCLIC[] = {_flags(form.cyclic)};",
        "",
        *_function("constraints", constraints), *_function("dynamics", dynamics), *_function("outputs", outputs),
    ]


def no_split_c() -> list[str]:
    """Return the split-free symbols of a model that does not re-partition (``NHB_REPARTITION = 0`` and stubs).

    Every generated ``model.c`` has them, the linear and controller FMUs' too.
    """
    return ["", "/* The model does not re-partition (fmu/nhb_split.c stays idle). */",
            "const int NHB_REPARTITION = 0;", 'const char *const NHB_SPLIT_METHOD = "";',
            "const int NHB_SPLIT_MAY_DEPEND[] = {0};", "const int NHB_SPLIT_CYCLIC[] = {0};", "",
            *_function("constraints", None), *_function("dynamics", None), *_function("outputs", None)]


__all__ = ["no_split_c", "split_c_parts"]
