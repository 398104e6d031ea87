model SwitchedRumocaReinitSettle
  Real i(start=1, fixed=true);
  Real v;
  Real s;
  Real z(start=0, fixed=true);
  Boolean off(start=false, fixed=true);
equation
  der(i) + v = -1.1;
  0 = if off then der(i) else der(i) + 1.1;
  s = if off then v else i;
  off = if pre(off) then s < 0 else i < 0;
  der(z) = if off then 1 else 0;
  when off then
    reinit(i, 0);
  end when;
end SwitchedRumocaReinitSettle;
