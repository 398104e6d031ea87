model RumocaReinitPreAlgebraic
  Real x(start=0, fixed=true);
  Real u(start=1, fixed=true);
  Real v;
equation
  der(x) = 1;
  v = 2*u;
  der(u) = 0;
  when x > 0.5 then
    reinit(u, pre(v));
  end when;
end RumocaReinitPreAlgebraic;
