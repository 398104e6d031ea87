model SwitchedRumocaStillState
  Real x(start=0, fixed=true);
  Boolean b;
equation
  der(x) = 0;
  b = 10*sin(100*time) < 0.6;
end SwitchedRumocaStillState;
