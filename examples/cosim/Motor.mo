model Motor "Source of energy of limited power: static characteristic M(w) = M0*(1 - w/w0)"
  parameter Real M0(unit = "N.m") = 4.0 "stall torque (at w = 0)";
  parameter Real w0(unit = "rad/s") = 40.0 "no-load speed (M = 0)";
  input Real w(unit = "rad/s", start = 0.0) "shaft speed";
  output Real tau(unit = "N.m") "driving torque";
equation
  tau = M0*(1 - w/w0);
end Motor;
