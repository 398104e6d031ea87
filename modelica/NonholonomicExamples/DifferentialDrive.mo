within NonholonomicExamples;
model DifferentialDrive "A differential-drive robot: a chassis on one axle with two driven wheels rolling without slip on the ground z = 0, each driven by a motor torque acting between the chassis and its wheel. The two rolling-disk contacts both forbid sliding along the axle, so one of their four no-slip rows repeats the others and is dropped: 2 degrees of freedom remain (the two wheel angles)."
  // parameters
  parameter Real R(unit="m") = 0.05 "wheel radius";
  parameter Real b(unit="m") = 0.15 "half the track (axle midpoint to each wheel)";
  parameter Real d(unit="m") = 0.05 "chassis mass centre ahead of the axle";
  parameter Real mc(unit="kg") = 4.0 "chassis mass";
  parameter Real Ic(unit="kg.m2") = 0.05 "chassis inertia about its vertical axis";
  parameter Real mw(unit="kg") = 0.3 "wheel mass";
  parameter Real Iwa(unit="kg.m2") = 0.0004 "wheel inertia about its axle";
  parameter Real Iwd(unit="kg.m2") = 0.0002 "wheel inertia about a diameter";
  parameter Real g(unit="m/s2") = 9.81 "gravity";
  parameter Real tauL(unit="N.m") = 0.02 "left motor torque";
  parameter Real tauR(unit="N.m") = 0.03 "right motor torque (more than the left: it turns left)";
  // generalized coordinates
  Real x(start=0.0, fixed=true, unit="m") "axle midpoint, x";
  Real y(start=0.0, fixed=true, unit="m") "axle midpoint, y";
  Real psi(start=0.0, fixed=true, unit="rad") "heading about N.z";
  Real phiL(start=0.0, fixed=true, unit="rad") "left wheel angle about the axle";
  Real phiR(start=0.0, fixed=true, unit="rad") "right wheel angle about the axle";
  // generalized velocities
  Real der_x(start=0.0, fixed=true, unit="m/s") "velocity der(x)";
  Real der_y(start=0.0, fixed=true, unit="m/s") "velocity der(y)";
  Real der_psi(start=0.0, fixed=true, unit="rad/s") "velocity der(psi)";
  Real der_phiL(start=0.0, fixed=true, unit="rad/s") "velocity der(phiL)";
  Real der_phiR(start=0.0, fixed=true, unit="rad/s") "velocity der(phiR)";
  Real der_der_x(unit="m/s2") "acceleration der(der(x))";
  Real der_der_y(unit="m/s2") "acceleration der(der(y))";
  Real der_der_psi(unit="rad/s2") "acceleration der(der(psi))";
  Real der_der_phiL(unit="rad/s2") "acceleration der(der(phiL))";
  Real der_der_phiR(unit="rad/s2") "acceleration der(der(phiR))";
  Real lambda[3](each unit="N") "constraint multipliers: generalized constraint forces A^T*lambda";
  Real residual[3](each unit="m/s") "constraint residuals at velocity level (holonomic ones differentiated); stay near 0";
protected
  Real nhb_cse1(unit="kg") "common subexpression";
  Real nhb_cse2(unit="kg") "common subexpression";
  Real nhb_cse3(unit="1") "common subexpression";
  Real nhb_cse4(unit="kg.m") "common subexpression";
  Real nhb_cse5(unit="kg.m") "common subexpression";
  Real nhb_cse6(unit="kg.m") "common subexpression";
  Real nhb_cse7(unit="1") "common subexpression";
  Real nhb_cse8(unit="kg.m") "common subexpression";
  Real nhb_cse9(unit="1") "common subexpression";
  Real nhb_cse10(unit="1") "common subexpression";
  Real nhb_cse11(unit="m2") "common subexpression";
  Real nhb_cse12(unit="1") "common subexpression";
  Real nhb_cse13(unit="m") "common subexpression";
  Real nhb_cse14(unit="m") "common subexpression";
  Real nhb_cse15(unit="m") "common subexpression";
  Real nhb_cse16(unit="m") "common subexpression";
  Real nhb_cse17(unit="1") "common subexpression";
  Real nhb_cse18(unit="1/s2") "common subexpression";
  Real nhb_cse19(unit="m/s") "common subexpression";
  Real nhb_cse20(unit="m/s") "common subexpression";
  Real nhb_cse21(unit="m/s") "common subexpression";
  Real nhb_cse22(unit="m/s") "common subexpression";
  Real nhb_cse23(unit="m/s") "common subexpression";
  Real nhb_cse24(unit="m/s") "common subexpression";
  Real nhb_cse25(unit="m/s") "common subexpression";
  Real nhb_cse26(unit="m/s") "common subexpression";
  Real nhb_cse27(unit="m/s") "common subexpression";
  Real nhb_cse28(unit="m/s") "common subexpression";
  Real nhb_cse29(unit="m/s") "common subexpression";
  Real nhb_cse30(unit="m/s") "common subexpression";
equation
  // kinematics
  der(x) = der_x;
  der(y) = der_y;
  der(psi) = der_psi;
  der(phiL) = der_phiL;
  der(phiR) = der_phiR;
  der(der_x) = der_der_x;
  der(der_y) = der_der_y;
  der(der_psi) = der_der_psi;
  der(der_phiL) = der_der_phiL;
  der(der_phiR) = der_der_phiR;
  // common subexpressions
  nhb_cse1 = 2*mw;
  nhb_cse2 = mc + nhb_cse1;
  nhb_cse3 = sin(psi);
  nhb_cse4 = d*mc;
  nhb_cse5 = nhb_cse3*nhb_cse4;
  nhb_cse6 = -nhb_cse5;
  nhb_cse7 = cos(psi);
  nhb_cse8 = nhb_cse4*nhb_cse7;
  nhb_cse9 = -nhb_cse7;
  nhb_cse10 = nhb_cse3^2;
  nhb_cse11 = 2*d^2;
  nhb_cse12 = nhb_cse7^2;
  nhb_cse13 = b*nhb_cse10 + b*nhb_cse12;
  nhb_cse14 = -nhb_cse13;
  nhb_cse15 = R*nhb_cse10 + R*nhb_cse12;
  nhb_cse16 = -nhb_cse15;
  nhb_cse17 = -nhb_cse3;
  nhb_cse18 = der_psi^2;
  nhb_cse19 = R*der_phiL;
  nhb_cse20 = b*der_psi;
  nhb_cse21 = nhb_cse20*nhb_cse3;
  nhb_cse22 = nhb_cse19*nhb_cse3 + nhb_cse21;
  nhb_cse23 = nhb_cse20*nhb_cse7;
  nhb_cse24 = nhb_cse19*nhb_cse7 + nhb_cse23;
  nhb_cse25 = -nhb_cse24;
  nhb_cse26 = der_y - nhb_cse22;
  nhb_cse27 = der_x - nhb_cse24;
  nhb_cse28 = R*der_phiR;
  nhb_cse29 = nhb_cse28*nhb_cse3;
  nhb_cse30 = nhb_cse28*nhb_cse7;
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  der_der_psi*nhb_cse6 + der_der_x*nhb_cse2 + lambda[1]*nhb_cse7 + lambda[2]*nhb_cse3 + lambda[3]*nhb_cse7 = nhb_cse18*nhb_cse8;
  der_der_psi*nhb_cse8 + der_der_y*nhb_cse2 + lambda[1]*nhb_cse3 + lambda[2]*nhb_cse9 + lambda[3]*nhb_cse3 = nhb_cse18*nhb_cse5;
  der_der_psi*(Ic + 2*Iwd + b^2*nhb_cse1 + (0.5)*mc*(nhb_cse10*nhb_cse11 + nhb_cse11*nhb_cse12)) + der_der_x*nhb_cse6 + der_der_y*nhb_cse8 + lambda[1]*nhb_cse14 + lambda[3]*nhb_cse13 = 0;
  Iwa*der_der_phiL + lambda[1]*nhb_cse16 = tauL;
  Iwa*der_der_phiR + lambda[3]*nhb_cse16 = tauR;
  // constraints at acceleration level (index 1)
  // contacts.wheelL (no slip along its heading)
  der_der_phiL*nhb_cse15 + der_der_psi*nhb_cse13 + der_der_x*nhb_cse9 + der_der_y*nhb_cse17 = -der_psi*(-nhb_cse22*nhb_cse7 - nhb_cse25*nhb_cse3 - nhb_cse26*nhb_cse7 + nhb_cse27*nhb_cse3);
  // contacts.wheelL (no slip along its axle)
  der_der_x*nhb_cse17 + der_der_y*nhb_cse7 = -der_psi*(-nhb_cse22*nhb_cse3 + nhb_cse25*nhb_cse7 - nhb_cse26*nhb_cse3 - nhb_cse27*nhb_cse7);
  // contacts.wheelR (no slip along its heading)
  der_der_phiR*nhb_cse15 + der_der_psi*nhb_cse14 + der_der_x*nhb_cse9 + der_der_y*nhb_cse17 = -der_psi*(-nhb_cse3*(nhb_cse23 - nhb_cse30) + nhb_cse3*(der_x + nhb_cse23 - nhb_cse30) - nhb_cse7*(-nhb_cse21 + nhb_cse29) - nhb_cse7*(der_y + nhb_cse21 - nhb_cse29));
  // constraint residuals (velocity level)
  residual[1] = -(-R*der_phiL*sin(psi) - b*der_psi*sin(psi) + der_y)*sin(psi) - (-R*der_phiL*cos(psi) - b*der_psi*cos(psi) + der_x)*cos(psi);
  residual[2] = (-R*der_phiL*sin(psi) - b*der_psi*sin(psi) + der_y)*cos(psi) - (-R*der_phiL*cos(psi) - b*der_psi*cos(psi) + der_x)*sin(psi);
  residual[3] = -(-R*der_phiR*sin(psi) + b*der_psi*sin(psi) + der_y)*sin(psi) - (-R*der_phiR*cos(psi) + b*der_psi*cos(psi) + der_x)*cos(psi);
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=2.0, Interval=0.002, Tolerance=1e-08),
    Documentation(info="<html>
<p>A differential-drive robot: a chassis on one axle with two driven wheels rolling without slip on the ground z = 0, each driven by a motor torque acting between the chassis and its wheel. The two rolling-disk contacts both forbid sliding along the axle, so one of their four no-slip rows repeats the others and is dropped: 2 degrees of freedom remain (the two wheel angles).</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Export form (chosen automatically): variables: the accelerations of x, y, psi are coupled in the rows Rumoca 0.9 takes as their derivative rows and held by the constraint rows it leaves to its algebraic part; Rumoca 0.9 factorises such an implicit DAE as structurally singular (docs/compiler-defects), so the accelerations are algebraic variables der_der_q with der(der_q) = der_der_q and no other row holds a derivative.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.5)*Ic*der(psi)^2 + (0.5)*Iwa*der(phiL)^2 + (0.5)*Iwa*der(phiR)^2 + Iwd*der(psi)^2 + b^2*der(psi)^2*mw + der(x)^2*mw + der(y)^2*mw + (0.5)*mc*((-d*der(psi)*sin(psi) + der(x))^2 + (d*der(psi)*cos(psi) + der(y))^2)</code></li>
<li>V = <code>R*g*mc + 2*R*g*mw</code></li>
<li>Q<sub>phiL</sub> = <code>tauL</code></li>
<li>Q<sub>phiR</sub> = <code>tauR</code></li>
<li>contacts.wheelL (no slip along its heading): <code>-(-R*der(phiL)*sin(psi) - b*der(psi)*sin(psi) + der(y))*sin(psi) - (-R*der(phiL)*cos(psi) - b*der(psi)*cos(psi) + der(x))*cos(psi)</code> = 0</li>
<li>contacts.wheelL (no slip along its axle): <code>(-R*der(phiL)*sin(psi) - b*der(psi)*sin(psi) + der(y))*cos(psi) - (-R*der(phiL)*cos(psi) - b*der(psi)*cos(psi) + der(x))*sin(psi)</code> = 0</li>
<li>contacts.wheelR (no slip along its heading): <code>-(-R*der(phiR)*sin(psi) + b*der(psi)*sin(psi) + der(y))*sin(psi) - (-R*der(phiR)*cos(psi) + b*der(psi)*cos(psi) + der(x))*cos(psi)</code> = 0</li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q + A^T*lambda</code> with the multipliers <code>lambda</code>, the constraints differentiated to acceleration level (index 1); <code>A</code> is the Jacobian of the velocity-level constraints <code>A*der(q) + a0 = 0</code>.</p>
</html>"));
end DifferentialDrive;
