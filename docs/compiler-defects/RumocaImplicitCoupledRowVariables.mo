// Workaround of RumocaImplicitCoupledRow.mo (the export form "variables-normal"): the derivatives as algebraic
// variables ap, aq, and the linear block K*[ap; aq; l] = F (K = [0.8 1 0; 1 0 1; 0 1 -1], F = [1; 2; 0]) as
// its normal equations (K^T*K)*[ap; aq; l] = K^T*F. Rumoca 0.9.13 simulates it: ap = 5, aq = -3, l = -3.
model RumocaImplicitCoupledRowNormal
  Real vp(start=0, fixed=true);
  Real vq(start=0, fixed=true);
  Real ap;
  Real aq;
  Real l;
equation
  der(vp) = ap;
  der(vq) = aq;
  1.64*ap + 0.8*aq + l = 2.8;
  0.8*ap + 2*aq - l = 1;
  ap - aq + 2*l = 2;
end RumocaImplicitCoupledRowNormal;
