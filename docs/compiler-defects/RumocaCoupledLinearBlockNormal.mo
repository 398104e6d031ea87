// Workaround of RumocaCoupledLinearBlock.mo (the export form "normal" of bridge.modelica.forms): the block
// L*[a; b] = r written as its normal equations (L^T*L)*[a; b] = L^T*r. Same solution wherever L is regular;
// the diagonal of L^T*L holds the squared column norms of L, which never vanish there. Rumoca simulates it.
model RumocaCoupledLinearBlockNormal
  Real x(start=0, fixed=true);
  Real a;
  Real b;
equation
  der(x) = 0.1*a;
  a*(sin(x)^2 + sin(x + 0.5)^2) - b*(sin(x)*cos(x) + sin(x + 0.5)*cos(x + 0.5)) = -sin(x) + 2*sin(x + 0.5);
  -a*(sin(x)*cos(x) + sin(x + 0.5)*cos(x + 0.5)) + b*(cos(x)^2 + cos(x + 0.5)^2) = cos(x) - 2*cos(x + 0.5);
end RumocaCoupledLinearBlockNormal;
