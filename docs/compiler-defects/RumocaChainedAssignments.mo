// Rumoca 0.9.13 defect (time, not a wrong result): a chain of n algebraic assignments in which each variable
// uses the previous one twice (a_k = a_(k-1)*cos(x) + 0.001*a_(k-1)^2) takes time exponential in n to simulate
// (1 s of simulated time, rtol 1e-10; this machine, shared): n = 5: 0.03 s, n = 10: 0.52 s, n = 15 (this
// file): 27 s, n = 20: not finished in 70 s. pymoca 0.12 + CasADi IDAS: n = 15 in 0.32 s, n = 100 in 0.63 s.
// The generated bicycle (lagrange: 16 states, 738 algebraic variables, most of them chained common
// subexpressions nhb_cse<k>) compiles in 1.6 s and does not simulate 0.01 s within 240 s.
model RumocaChainedAssignments
  Real x(start=0.5, fixed=true);
  Real a1;
  Real a2;
  Real a3;
  Real a4;
  Real a5;
  Real a6;
  Real a7;
  Real a8;
  Real a9;
  Real a10;
  Real a11;
  Real a12;
  Real a13;
  Real a14;
  Real a15;
equation
  a1 = sin(x);
  a2 = a1*cos(x) + 0.001*a1^2;
  a3 = a2*cos(x) + 0.001*a2^2;
  a4 = a3*cos(x) + 0.001*a3^2;
  a5 = a4*cos(x) + 0.001*a4^2;
  a6 = a5*cos(x) + 0.001*a5^2;
  a7 = a6*cos(x) + 0.001*a6^2;
  a8 = a7*cos(x) + 0.001*a7^2;
  a9 = a8*cos(x) + 0.001*a8^2;
  a10 = a9*cos(x) + 0.001*a9^2;
  a11 = a10*cos(x) + 0.001*a10^2;
  a12 = a11*cos(x) + 0.001*a11^2;
  a13 = a12*cos(x) + 0.001*a12^2;
  a14 = a13*cos(x) + 0.001*a13^2;
  a15 = a14*cos(x) + 0.001*a14^2;
  der(x) = -a15;
end RumocaChainedAssignments;
