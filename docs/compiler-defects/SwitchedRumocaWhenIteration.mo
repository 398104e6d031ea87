model SwitchedRumocaWhenIteration
  Real x(start=0, fixed=true);
  Real y;
  Integer mode(start=0, fixed=true);
equation
  der(x) = 1;
  y = if mode == 0 then x else 0;
  when y > 0.5 then
    mode = 1;
  end when;
end SwitchedRumocaWhenIteration;
