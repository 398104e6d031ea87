// Rumoca 0.9.13 defect: implicit rows coupling two derivatives plus an output linear in a state (speed = v*r)
// make the system "structurally singular":
//   structural lowering failed: structurally singular system: 3 matched out of 4 equations and 3 unknowns;
//   unmatched equations: f_x[3]; unmatched unknowns: -
// Without the output (or with it written speed = der(x)*r, the same value) Rumoca simulates the model:
// RumocaLinearOutputOfStateDer.mo. pymoca 0.12 + CasADi IDAS simulates this file correctly.
model RumocaLinearOutputOfState
  parameter Real r = 0.3;
  Real x(start=0, fixed=true);
  Real v(start=1, fixed=true);
  Real w(start=0, fixed=true);
  output Real speed;
equation
  der(x) = v;
  2*der(v) + 0.5*der(w) = -x;
  0.5*der(v) + der(w) = 0;
  speed = v*r;
end RumocaLinearOutputOfState;
