// Rumoca 0.9.13 limitation (not a wrong result): no index reduction. The pendulum in Cartesian coordinates
// with its constraint as given (a DAE of index 3) is rejected:
//   structural lowering failed: structurally singular system: 4 matched out of 5 equations and 5 unknowns;
//   unmatched equations: ...; unmatched unknowns: lambda
// pymoca 0.12 does no index reduction either (bridge's IDAS backend integrates index-1 DAEs), so nhbridge
// exports the constraints at acceleration level (index 1) by default and refuses --constraint-level given
// with --check rumoca/pymoca, naming the form to use.
model RumocaNoIndexReduction
  Real x(start=0.5, fixed=true);
  Real y(start=-0.866, fixed=false);
  Real vx(start=0, fixed=true);
  Real vy(fixed=false);
  Real lambda;
equation
  der(x) = vx;
  der(y) = vy;
  der(vx) = 2*lambda*x;
  der(vy) = 2*lambda*y - 9.81;
  x^2 + y^2 = 1;
end RumocaNoIndexReduction;
