model SwitchedRumocaRestingRelation
  Real x(start=1, fixed=true);
  Real v(start=0, fixed=true);
  Real u(start=0, fixed=true);
  Boolean b;
equation
  der(x) = v;
  der(v) = -x;
  der(u) = 0;
  b = u > 0;
end SwitchedRumocaRestingRelation;
