model FrictionRumocaCurveParameter
  "A mass on a moving belt with Coulomb friction, written as the MSL's PartialFriction writes it"
  parameter Real m(unit="kg") = 1 "mass";
  parameter Real k(unit="N/m") = 10 "spring stiffness";
  parameter Real v_belt(unit="m/s") = 0.2 "belt speed";
  parameter Real f0(unit="N") = 2.943 "sliding friction force";
  parameter Real f0_max(unit="N") = 3.924 "largest sticking force";
  Real x(start=0, fixed=true, unit="m") "position";
  Real v(start=0.2, fixed=true, unit="m/s") "velocity";
  Real f(unit="N") "friction force, opposing the relative velocity";
  Real v_rel(unit="m/s") "relative velocity";
  Real a_rel(unit="m/s2") "relative acceleration";
  Real sa(unit="1") "path parameter";
  Boolean startForward(start=false, fixed=true);
  Boolean startBackward(start=false, fixed=true);
  Boolean locked(start=false);
  Integer mode(start=3, fixed=true);
equation
  der(x) = v;
  m*der(v) = -k*x - f;
  v_rel = v - v_belt;
  a_rel = der(v);
  startForward = pre(mode) == 0 and (sa > f0_max or pre(startForward) and sa > f0) or initial() and v_rel > 0;
  startBackward = pre(mode) == 0 and (sa < -f0_max or pre(startBackward) and sa < -f0) or initial() and v_rel < 0;
  locked = not (pre(mode) == 1 or startForward or pre(mode) == -1 or startBackward);
  a_rel = if locked then 0 else if startForward then sa - f0_max else if startBackward then sa + f0_max
    else if pre(mode) == 1 then sa - f0_max else sa + f0_max;
  f = if locked then sa else if startForward then f0 else if startBackward then -f0
    else if pre(mode) == 1 then f0 else -f0;
  mode = if (pre(mode) == 1 or startForward) and v_rel > 0 then 1
    else if (pre(mode) == -1 or startBackward) and v_rel < 0 then -1 else 0;
end FrictionRumocaCurveParameter;
