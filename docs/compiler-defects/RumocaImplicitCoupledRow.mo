// Rumoca 0.9.13 defect: an index-1 implicit DAE in which a row without the algebraic variable couples two
// derivatives (row 1) is factorised as structurally singular:
//   solver error: BDF new panicked: Failed to factorise matrix: SymbolicSingular { index: 2 } (at
//   .../diffsol-0.13.2/src/linear_solver/faer/sparse_lu.rs:49:18)
// The Jacobian of the rows in (der(vp), der(vq), l) is [0.8 1 0; 1 0 1; 0 1 -1], determinant 0.2: regular.
// Solution: der(vp) = 5, der(vq) = -3, l = -3. The same rows in another order (RumocaImplicitCoupledRowReordered.mo)
// simulate correctly. pymoca 0.12 + CasADi IDAS simulates this file correctly.
// Workaround: RumocaImplicitCoupledRowVariables.mo (the export form "variables" of bridge.modelica.forms).
model RumocaImplicitCoupledRow
  Real vp(start=0, fixed=true);
  Real vq(start=0, fixed=true);
  Real l;
equation
  der(vq) + 0.8*der(vp) = 1;
  der(vq) - l = 0;
  der(vp) + l = 2;
end RumocaImplicitCoupledRow;
