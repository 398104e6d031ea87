// RumocaLinearOutputOfState.mo with the output written through der(x) (= v): Rumoca 0.9.13 simulates it.
model RumocaLinearOutputOfStateDer
  parameter Real r = 0.3;
  Real x(start=0, fixed=true);
  Real v(start=1, fixed=true);
  Real w(start=0, fixed=true);
  output Real speed;
equation
  der(x) = v;
  2*der(v) + 0.5*der(w) = -x;
  0.5*der(v) + der(w) = 0;
  speed = der(x)*r;
end RumocaLinearOutputOfStateDer;
