// RumocaImplicitCoupledBlock.mo with the algebraic row holding only the derivative of a state outside the
// coupled block (vr): Rumoca 0.9.13 simulates it correctly (der(vp) = -25/6, der(vq) = 19/3, der(vr) = l = 2).
// What fails is a derivative of the coupled block in a row Rumoca leaves to its algebraic part.
model RumocaImplicitCoupledBlockUncoupledLeft
  Real vp(start=0, fixed=true);
  Real vq(start=0, fixed=true);
  Real vr(start=0, fixed=true);
  Real l;
equation
  0.8*der(vp) + der(vq) - l = 1;
  2*der(vp) + der(vq) + l = 0;
  der(vr) - l = 0;
  der(vr) = 2;
end RumocaImplicitCoupledBlockUncoupledLeft;
