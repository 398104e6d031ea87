within NonholonomicExamples;
model RollingDisk "Thin uniform disk rolling without slipping on a horizontal plane. (x, y) is the contact point, psi the heading (yaw of the disk plane), theta the lean from upright (about the heading direction), phi the spin about the axle. Upright rolling at spin rate W is a steady motion; it is stable when W^2 > g/(3 r) (Routh): nhbridge linearize examples/rolling_disk.toml --sweep \"der(phi)=0:8:81\"."
  // parameters
  parameter Real m(unit="kg") = 1.5 "mass of the disk";
  parameter Real r(unit="m") = 0.3 "radius of the disk";
  parameter Real g(unit="m/s2") = 9.81 "gravity";
  // generalized coordinates
  Real x(start=0.0, fixed=true, unit="m") "contact point, x";
  Real y(start=0.0, fixed=true, unit="m") "contact point, y";
  Real psi(start=0.0, fixed=true, unit="rad") "heading: yaw of the disk plane";
  Real theta(start=0.0, fixed=true, unit="rad") "lean from upright";
  Real phi(start=0.0, fixed=true, unit="rad") "spin about the axle";
  // generalized velocities
  Real der_x(start=2.4, fixed=true, unit="m/s") "velocity der(x)";
  Real der_y(start=0.0, fixed=true, unit="m/s") "velocity der(y)";
  Real der_psi(start=0.0, fixed=true, unit="rad/s") "velocity der(psi)";
  Real der_theta(start=0.0, fixed=true, unit="rad/s") "velocity der(theta)";
  Real der_phi(start=8.0, fixed=true, unit="rad/s") "velocity der(phi)";
  Real der_der_x(unit="m/s2") "acceleration der(der(x))";
  Real der_der_y(unit="m/s2") "acceleration der(der(y))";
  Real der_der_psi(unit="rad/s2") "acceleration der(der(psi))";
  Real der_der_theta(unit="rad/s2") "acceleration der(der(theta))";
  Real der_der_phi(unit="rad/s2") "acceleration der(der(phi))";
  Real lambda[2](each unit="N") "constraint multipliers: generalized constraint forces A^T*lambda";
  output Real lean(unit="rad") "lean angle";
  output Real speed(unit="m/s") "forward speed of the contact point";
  Real residual[2](each unit="m/s") "constraint residuals at velocity level (holonomic ones differentiated); stay near 0";
protected
  Real nhb_cse1(unit="1") "common subexpression";
  Real nhb_cse2(unit="m") "common subexpression";
  Real nhb_cse3(unit="1") "common subexpression";
  Real nhb_cse4(unit="kg") "common subexpression";
  Real nhb_cse5(unit="kg.m") "common subexpression";
  Real nhb_cse6(unit="1") "common subexpression";
  Real nhb_cse7(unit="m") "common subexpression";
  Real nhb_cse8(unit="1") "common subexpression";
  Real nhb_cse9(unit="kg") "common subexpression";
  Real nhb_cse10(unit="kg.m") "common subexpression";
  Real nhb_cse11(unit="kg.m") "common subexpression";
  Real nhb_cse12(unit="kg.m") "common subexpression";
  Real nhb_cse13(unit="kg") "common subexpression";
  Real nhb_cse14(unit="m2") "common subexpression";
  Real nhb_cse15(unit="m2") "common subexpression";
  Real nhb_cse16(unit="1") "common subexpression";
  Real nhb_cse17(unit="kg.m2") "common subexpression";
  Real nhb_cse18(unit="1") "common subexpression";
  Real nhb_cse19(unit="m2") "common subexpression";
  Real nhb_cse20(unit="1") "common subexpression";
  Real nhb_cse21(unit="kg.m2") "common subexpression";
  Real nhb_cse22(unit="kg.m2") "common subexpression";
  Real nhb_cse23(unit="m2") "common subexpression";
  Real nhb_cse24(unit="m2") "common subexpression";
  Real nhb_cse25(unit="1/s") "common subexpression";
  Real nhb_cse26(unit="m") "common subexpression";
  Real nhb_cse27(unit="m/s") "common subexpression";
  Real nhb_cse28(unit="m/s") "common subexpression";
  Real nhb_cse29(unit="kg/s") "common subexpression";
  Real nhb_cse30(unit="m/s") "common subexpression";
  Real nhb_cse31(unit="m/s") "common subexpression";
  Real nhb_cse32(unit="kg/s") "common subexpression";
  Real nhb_cse33(unit="m/s") "common subexpression";
  Real nhb_cse34(unit="m/s") "common subexpression";
  Real nhb_cse35(unit="m") "common subexpression";
  Real nhb_cse36(unit="m/s") "common subexpression";
  Real nhb_cse37(unit="m/s") "common subexpression";
  Real nhb_cse38(unit="m/s") "common subexpression";
  Real nhb_cse39(unit="m") "common subexpression";
  Real nhb_cse40(unit="m/s") "common subexpression";
  Real nhb_cse41(unit="m") "common subexpression";
  Real nhb_cse42(unit="m2/s") "common subexpression";
  Real nhb_cse43(unit="kg/s") "common subexpression";
  Real nhb_cse44(unit="1/s") "common subexpression";
  Real nhb_cse45(unit="kg.m2") "common subexpression";
  Real nhb_cse46(unit="m/s") "common subexpression";
  Real nhb_cse47(unit="m") "common subexpression";
  Real nhb_cse48(unit="m2/s") "common subexpression";
  Real nhb_cse49(unit="1") "common subexpression";
  Real nhb_cse50(unit="m") "common subexpression";
equation
  // kinematics
  der(x) = der_x;
  der(y) = der_y;
  der(psi) = der_psi;
  der(theta) = der_theta;
  der(phi) = der_phi;
  der(der_x) = der_der_x;
  der(der_y) = der_der_y;
  der(der_psi) = der_der_psi;
  der(der_theta) = der_der_theta;
  der(der_phi) = der_der_phi;
  // common subexpressions
  nhb_cse1 = cos(psi);
  nhb_cse2 = nhb_cse1*r;
  nhb_cse3 = sin(theta);
  nhb_cse4 = m*nhb_cse3;
  nhb_cse5 = nhb_cse2*nhb_cse4;
  nhb_cse6 = sin(psi);
  nhb_cse7 = nhb_cse6*r;
  nhb_cse8 = cos(theta);
  nhb_cse9 = m*nhb_cse8;
  nhb_cse10 = nhb_cse7*nhb_cse9;
  nhb_cse11 = nhb_cse4*nhb_cse7;
  nhb_cse12 = -nhb_cse2*nhb_cse9;
  nhb_cse13 = (0.5)*m;
  nhb_cse14 = r^2;
  nhb_cse15 = nhb_cse14*nhb_cse3^2;
  nhb_cse16 = nhb_cse8^2;
  nhb_cse17 = (0.25)*m*nhb_cse14;
  nhb_cse18 = nhb_cse6^2;
  nhb_cse19 = 2*nhb_cse15;
  nhb_cse20 = nhb_cse1^2;
  nhb_cse21 = nhb_cse13*nhb_cse14;
  nhb_cse22 = nhb_cse21*nhb_cse3;
  nhb_cse23 = 2*nhb_cse14;
  nhb_cse24 = nhb_cse16*nhb_cse23;
  nhb_cse25 = der_psi*nhb_cse3;
  nhb_cse26 = nhb_cse2*nhb_cse8;
  nhb_cse27 = -der_theta*nhb_cse26 + nhb_cse25*nhb_cse7;
  nhb_cse28 = -nhb_cse27;
  nhb_cse29 = der_psi*m;
  nhb_cse30 = der_theta*nhb_cse7;
  nhb_cse31 = der_psi*nhb_cse26 - nhb_cse3*nhb_cse30;
  nhb_cse32 = der_theta*m;
  nhb_cse33 = nhb_cse2*nhb_cse25 + nhb_cse30*nhb_cse8;
  nhb_cse34 = der_psi*nhb_cse7;
  nhb_cse35 = nhb_cse2*nhb_cse3;
  nhb_cse36 = der_theta*nhb_cse35 + nhb_cse34*nhb_cse8;
  nhb_cse37 = 2*der_x + 2*nhb_cse33;
  nhb_cse38 = 2*der_y + 2*nhb_cse27;
  nhb_cse39 = nhb_cse3*nhb_cse7;
  nhb_cse40 = 2*nhb_cse33;
  nhb_cse41 = 2*nhb_cse35;
  nhb_cse42 = nhb_cse35*nhb_cse38 - nhb_cse37*nhb_cse39;
  nhb_cse43 = der_psi*nhb_cse13;
  nhb_cse44 = der_phi + nhb_cse25;
  nhb_cse45 = nhb_cse21*nhb_cse8;
  nhb_cse46 = 2*nhb_cse36;
  nhb_cse47 = nhb_cse7*nhb_cse8;
  nhb_cse48 = nhb_cse26*nhb_cse37 + nhb_cse38*nhb_cse47;
  nhb_cse49 = nhb_cse3*nhb_cse8;
  nhb_cse50 = 2*nhb_cse47;
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  der_der_psi*nhb_cse5 + der_der_theta*nhb_cse10 + der_der_x*m - lambda[1] = -nhb_cse28*nhb_cse29 - nhb_cse31*nhb_cse32;
  der_der_psi*nhb_cse11 + der_der_theta*nhb_cse12 + der_der_y*m - lambda[2] = -nhb_cse29*nhb_cse33 - nhb_cse32*nhb_cse36;
  der_der_phi*nhb_cse22 + der_der_psi*(nhb_cse13*nhb_cse15 + nhb_cse13*(nhb_cse18*nhb_cse19 + nhb_cse19*nhb_cse20) + nhb_cse16*nhb_cse17) + der_der_x*nhb_cse5 + der_der_y*nhb_cse11 = -der_theta*(nhb_cse13*(nhb_cse31*nhb_cse41 + nhb_cse39*nhb_cse46 + nhb_cse48) + nhb_cse44*nhb_cse45) + (0.5)*m*(nhb_cse28*nhb_cse37 + nhb_cse33*nhb_cse38) - nhb_cse43*(nhb_cse28*nhb_cse41 + nhb_cse39*nhb_cse40 + nhb_cse42);
  der_der_theta*(nhb_cse13*(nhb_cse18*nhb_cse24 + nhb_cse19 + nhb_cse20*nhb_cse24) + nhb_cse17) + der_der_x*nhb_cse10 + der_der_y*nhb_cse12 = -der_psi^2*nhb_cse17*nhb_cse49 + (0.5)*der_psi*m*nhb_cse14*nhb_cse44*nhb_cse8 - der_theta*nhb_cse13*(4*der_theta*nhb_cse14*nhb_cse49 - nhb_cse26*nhb_cse46 + nhb_cse31*nhb_cse50 + nhb_cse42) + g*m*nhb_cse3*r + (0.5)*m*(der_theta^2*nhb_cse23*nhb_cse49 + nhb_cse31*nhb_cse37 + nhb_cse36*nhb_cse38) - nhb_cse43*(-nhb_cse26*nhb_cse40 + nhb_cse28*nhb_cse50 + nhb_cse48);
  der_der_phi*nhb_cse21 + der_der_psi*nhb_cse22 + lambda[1]*nhb_cse2 + lambda[2]*nhb_cse7 = -der_psi*der_theta*nhb_cse45;
  // constraints at acceleration level (index 1)
  // constraints.nonholonomic[1]
  -der_der_phi*nhb_cse2 + der_der_x = -der_phi*nhb_cse34;
  // constraints.nonholonomic[2]
  -der_der_phi*nhb_cse7 + der_der_y = der_phi*der_psi*nhb_cse2;
  // constraint residuals (velocity level)
  residual[1] = -der_phi*r*cos(psi) + der_x;
  residual[2] = -der_phi*r*sin(psi) + der_y;
  // outputs
  lean = theta;
  speed = der(phi)*r;
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=5.0, Interval=0.005, Tolerance=1e-08),
    Documentation(info="<html>
<p>Thin uniform disk rolling without slipping on a horizontal plane. (x, y) is the contact point, psi the heading (yaw of the disk plane), theta the lean from upright (about the heading direction), phi the spin about the axle. Upright rolling at spin rate W is a steady motion; it is stable when W^2 &gt; g/(3 r) (Routh): nhbridge linearize examples/rolling_disk.toml --sweep \"der(phi)=0:8:81\".</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Export form (chosen automatically): variables: the accelerations of x, y, phi are coupled in the rows Rumoca 0.9 takes as their derivative rows and held by the constraint rows it leaves to its algebraic part; Rumoca 0.9 factorises such an implicit DAE as structurally singular (docs/compiler-defects), so the accelerations are algebraic variables der_der_q with der(der_q) = der_der_q and no other row holds a derivative.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.25)*m*r^2*(der(phi) + der(psi)*sin(theta))^2 + (0.125)*m*r^2*(der(psi)^2*cos(theta)^2 + der(theta)^2) + (0.5)*m*(der(theta)^2*r^2*sin(theta)^2 + (der(psi)*r*sin(psi)*sin(theta) - der(theta)*r*cos(psi)*cos(theta) + der(y))^2 + (der(psi)*r*sin(theta)*cos(psi) + der(theta)*r*sin(psi)*cos(theta) + der(x))^2)</code></li>
<li>V = <code>g*m*r*cos(theta)</code></li>
<li>constraints.nonholonomic[1]: <code>-der(phi)*r*cos(psi) + der(x)</code> = 0</li>
<li>constraints.nonholonomic[2]: <code>-der(phi)*r*sin(psi) + der(y)</code> = 0</li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q + A^T*lambda</code> with the multipliers <code>lambda</code>, the constraints differentiated to acceleration level (index 1); <code>A</code> is the Jacobian of the velocity-level constraints <code>A*der(q) + a0 = 0</code>.</p>
</html>"));
end RollingDisk;
