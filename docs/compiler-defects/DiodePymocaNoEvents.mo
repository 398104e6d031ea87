model DiodePymocaNoEvents
  "A half-wave rectifier with an RL load: the MSL's IdealDiode (Ron = Goff = 1e-5, Vknee = 0.6)"
  Real i(start=0, fixed=true) "current";
  Real v "diode voltage";
  Real s(start=0) "curve parameter";
  Boolean off(start=true) "blocking";
equation
  0.05*der(i) = 10*sin(100*time) - 4*i - v;
  off = s < 0;
  v = s*(if off then 1 else 1e-5) + 0.6;
  i = s*(if off then 1e-5 else 1) + 1e-5*0.6;
end DiodePymocaNoEvents;
