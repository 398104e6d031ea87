// RumocaImplicitCoupledRow.mo with its rows in another order: Rumoca 0.9.13 simulates this one correctly
// (der(vp) = 5, der(vq) = -3, l = -3), so the failure of the other file is a defect, not a property of the DAE.
model RumocaImplicitCoupledRowReordered
  Real vp(start=0, fixed=true);
  Real vq(start=0, fixed=true);
  Real l;
equation
  der(vp) + l = 2;
  der(vq) - l = 0;
  der(vq) + 0.8*der(vp) = 1;
end RumocaImplicitCoupledRowReordered;
