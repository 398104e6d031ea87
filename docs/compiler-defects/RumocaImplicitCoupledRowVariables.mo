// Workaround of RumocaImplicitCoupledRow.mo (the export form "variables" of bridge.modelica.forms): the
// derivatives as algebraic variables ap, aq (der(vp) = ap, der(vq) = aq), so that no row but the state
// definitions holds a derivative. Rumoca 0.9.13 simulates it: ap = 5, aq = -3, l = -3.
model RumocaImplicitCoupledRowVariables
  Real vp(start=0, fixed=true);
  Real vq(start=0, fixed=true);
  Real ap;
  Real aq;
  Real l;
equation
  der(vp) = ap;
  der(vq) = aq;
  aq + 0.8*ap = 1;
  aq - l = 0;
  ap + l = 2;
end RumocaImplicitCoupledRowVariables;
