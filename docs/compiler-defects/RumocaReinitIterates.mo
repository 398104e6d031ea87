model RumocaReinitIterates
  Real x(start=0, fixed=true);
  Real u(start=1, fixed=true);
equation
  der(x) = 1;
  der(u) = 0;
  when x > 0.5 then
    reinit(u, 2*u);
  end when;
end RumocaReinitIterates;
