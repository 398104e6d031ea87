// Rumoca 0.9.13 defect: a coupled linear block of algebraic variables (a, b) that the state derivative
// needs is solved row by row on a structural matching (row 1 for a, row 2 for b); at x = 0 the coefficient
// of a in row 1 is sin(0) = 0 and the simulation stops:
//   solve-IR evaluation failed: algebraic refresh row 1 cannot be solved for 'a': the residual does not depend on it
// The block is regular for every x (determinant sin(0.5)); exact solution
// a = (cos(x + 0.5) + 2*cos(x))/sin(0.5), b = (sin(x + 0.5) + 2*sin(x))/sin(0.5).
// pymoca 0.12 + CasADi IDAS simulates it correctly. Workaround: RumocaCoupledLinearBlockNormal.mo.
model RumocaCoupledLinearBlock
  Real x(start=0, fixed=true);
  Real a;
  Real b;
equation
  der(x) = 0.1*a;
  a*sin(x) - b*cos(x) = -1;
  a*sin(x + 0.5) - b*cos(x + 0.5) = 2;
end RumocaCoupledLinearBlock;
