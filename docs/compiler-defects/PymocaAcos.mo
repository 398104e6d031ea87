// pymoca 0.12 defect: the Modelica built-ins asin, acos, atan and atan2 (Modelica Language Specification
// 3.7.3) are unknown to its CasADi generator, which maps a call to the casadi.MX method of the same name
// (CasADi spells them arcsin, arccos, arctan, arctan2):
//   Exception: Unknown function acos
// Rumoca 0.9.13 simulates it correctly (x(t) solves der(x) = -0.1*acos(x)). Workaround in nhbridge:
// bridge.tools.pymoca.require_pymoca adds the four names to pymoca's operator table.
model PymocaAcos
  Real x(start=0.5, fixed=true);
equation
  der(x) = -0.1*acos(x);
end PymocaAcos;
