// Rumoca 0.9.13: "BDF new panicked: Failed to factorise matrix: SymbolicSingular { index: 2 }".
// The rolling wheel's structure (examples/rolling_wheel.toml by lagrange): every dynamics row holds the
// multiplier l, two of them couple der(vp) and der(vq), and the constraint row holds those derivatives.
// Rumoca takes the first two rows as the derivative rows of vp and vq (a coupled block) and leaves the third
// to its algebraic part. Index 1: der(vp) = 25/24, der(vq) = -23/24, l = -9/8 (pymoca + IDAS simulates it).
model RumocaImplicitCoupledBlock
  Real vp(start=0, fixed=true);
  Real vq(start=0, fixed=true);
  Real l;
equation
  0.8*der(vp) + der(vq) - l = 1;
  2*der(vp) + der(vq) + l = 0;
  der(vp) - der(vq) = 2;
end RumocaImplicitCoupledBlock;
