// The same Rumoca 0.9.13 defect met during the run: x starts at -0.5 and passes x = 0 at t = 0.5, where the
// coefficient of a in row 1 vanishes:
//   solve-IR evaluation failed: unsupported solve-IR runtime model: algebraic refresh row 1 cannot be solved
//   for 'a': the residual does not depend on it
model RumocaCoupledLinearBlockMidRun
  Real x(start=-0.5, fixed=true);
  Real a;
  Real b;
equation
  der(x) = 1 + 0*a;
  a*sin(x) - b*cos(x) = -1;
  a*sin(x + 0.5) - b*cos(x + 0.5) = 2;
end RumocaCoupledLinearBlockMidRun;
