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
  Real nhb_cse1(unit="kg2") "common subexpression";
  Real nhb_cse2(unit="1") "common subexpression";
  Real nhb_cse3(unit="1") "common subexpression";
  Real nhb_cse4(unit="m2") "common subexpression";
  Real nhb_cse5(unit="1") "common subexpression";
  Real nhb_cse6(unit="m2") "common subexpression";
  Real nhb_cse7(unit="m2") "common subexpression";
  Real nhb_cse8(unit="kg2.m2") "common subexpression";
  Real nhb_cse9(unit="1") "common subexpression";
  Real nhb_cse10(unit="1") "common subexpression";
  Real nhb_cse11(unit="1") "common subexpression";
  Real nhb_cse12(unit="m2") "common subexpression";
  Real nhb_cse13(unit="kg2.m2") "common subexpression";
  Real nhb_cse14(unit="kg2.m2") "common subexpression";
  Real nhb_cse15 "common subexpression";
  Real nhb_cse16(unit="m2") "common subexpression";
  Real nhb_cse17(unit="kg2") "common subexpression";
  Real nhb_cse18(unit="kg2.m2") "common subexpression";
  Real nhb_cse19(unit="m") "common subexpression";
  Real nhb_cse20(unit="kg2") "common subexpression";
  Real nhb_cse21(unit="kg") "common subexpression";
  Real nhb_cse22(unit="kg.m2") "common subexpression";
  Real nhb_cse23(unit="kg.m2") "common subexpression";
  Real nhb_cse24(unit="1") "common subexpression";
  Real nhb_cse25(unit="kg.m2") "common subexpression";
  Real nhb_cse26(unit="kg") "common subexpression";
  Real nhb_cse27(unit="kg.m") "common subexpression";
  Real nhb_cse28 "common subexpression";
  Real nhb_cse29(unit="m") "common subexpression";
  Real nhb_cse30(unit="kg2") "common subexpression";
  Real nhb_cse31(unit="kg.m2") "common subexpression";
  Real nhb_cse32(unit="kg") "common subexpression";
  Real nhb_cse33(unit="kg.m") "common subexpression";
  Real nhb_cse34 "common subexpression";
  Real nhb_cse35(unit="m3") "common subexpression";
  Real nhb_cse36(unit="kg2.m3") "common subexpression";
  Real nhb_cse37 "common subexpression";
  Real nhb_cse38(unit="kg") "common subexpression";
  Real nhb_cse39(unit="kg2.m2") "common subexpression";
  Real nhb_cse40(unit="kg2.m2") "common subexpression";
  Real nhb_cse41(unit="kg.m") "common subexpression";
  Real nhb_cse42 "common subexpression";
  Real nhb_cse43(unit="kg.m") "common subexpression";
  Real nhb_cse44 "common subexpression";
  Real nhb_cse45 "common subexpression";
  Real nhb_cse46(unit="kg2.m4") "common subexpression";
  Real nhb_cse47(unit="kg2.m4") "common subexpression";
  Real nhb_cse48(unit="kg2.m4") "common subexpression";
  Real nhb_cse49(unit="kg.m3") "common subexpression";
  Real nhb_cse50(unit="kg.m3") "common subexpression";
  Real nhb_cse51 "common subexpression";
  Real nhb_cse52(unit="kg.m3") "common subexpression";
  Real nhb_cse53 "common subexpression";
  Real nhb_cse54(unit="kg.m") "common subexpression";
  Real nhb_cse55(unit="m/s") "common subexpression";
  Real nhb_cse56(unit="1/s") "common subexpression";
  Real nhb_cse57(unit="m") "common subexpression";
  Real nhb_cse58(unit="m/s") "common subexpression";
  Real nhb_cse59(unit="m/s") "common subexpression";
  Real nhb_cse60(unit="kg/s") "common subexpression";
  Real nhb_cse61(unit="m/s") "common subexpression";
  Real nhb_cse62(unit="m/s") "common subexpression";
  Real nhb_cse63(unit="kg/s") "common subexpression";
  Real nhb_cse64(unit="N") "common subexpression";
  Real nhb_cse65(unit="kg2.m/s2") "common subexpression";
  Real nhb_cse66(unit="m/s") "common subexpression";
  Real nhb_cse67(unit="m/s") "common subexpression";
  Real nhb_cse68(unit="m/s") "common subexpression";
  Real nhb_cse69(unit="m") "common subexpression";
  Real nhb_cse70(unit="m/s") "common subexpression";
  Real nhb_cse71(unit="m") "common subexpression";
  Real nhb_cse72(unit="m") "common subexpression";
  Real nhb_cse73(unit="m2/s") "common subexpression";
  Real nhb_cse74(unit="kg/s") "common subexpression";
  Real nhb_cse75(unit="1/s") "common subexpression";
  Real nhb_cse76(unit="m/s") "common subexpression";
  Real nhb_cse77(unit="m/s") "common subexpression";
  Real nhb_cse78(unit="m") "common subexpression";
  Real nhb_cse79(unit="m2/s") "common subexpression";
  Real nhb_cse80(unit="N.m") "common subexpression";
  Real nhb_cse81(unit="1") "common subexpression";
  Real nhb_cse82(unit="m2") "common subexpression";
  Real nhb_cse83(unit="m") "common subexpression";
  Real nhb_cse84(unit="N.m") "common subexpression";
  Real nhb_cse85(unit="N") "common subexpression";
  Real nhb_cse86(unit="kg2.m/s2") "common subexpression";
  Real nhb_cse87(unit="kg2.m4/s") "common subexpression";
  Real nhb_cse88(unit="1/s2") "common subexpression";
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
  nhb_cse1 = m^2;
  nhb_cse2 = cos(theta);
  nhb_cse3 = nhb_cse2^2;
  nhb_cse4 = r^2;
  nhb_cse5 = sin(psi);
  nhb_cse6 = nhb_cse4*nhb_cse5^2;
  nhb_cse7 = nhb_cse3*nhb_cse6;
  nhb_cse8 = nhb_cse1*nhb_cse7;
  nhb_cse9 = sin(theta);
  nhb_cse10 = nhb_cse9^2;
  nhb_cse11 = cos(psi);
  nhb_cse12 = nhb_cse11^2*nhb_cse4;
  nhb_cse13 = nhb_cse1*nhb_cse12;
  nhb_cse14 = nhb_cse10*nhb_cse13;
  nhb_cse15 = nhb_cse1 + 1;
  nhb_cse16 = nhb_cse11*nhb_cse4*nhb_cse5;
  nhb_cse17 = nhb_cse1*nhb_cse10;
  nhb_cse18 = -nhb_cse1*nhb_cse16*nhb_cse3 + nhb_cse16*nhb_cse17;
  nhb_cse19 = nhb_cse11*r;
  nhb_cse20 = nhb_cse1*nhb_cse9;
  nhb_cse21 = (0.5)*m;
  nhb_cse22 = nhb_cse21*nhb_cse4;
  nhb_cse23 = (0.25)*m*nhb_cse4;
  nhb_cse24 = 2*nhb_cse10;
  nhb_cse25 = nhb_cse10*nhb_cse22 + nhb_cse21*(nhb_cse12*nhb_cse24 + nhb_cse24*nhb_cse6) + nhb_cse23*nhb_cse3;
  nhb_cse26 = m*nhb_cse9;
  nhb_cse27 = nhb_cse19*nhb_cse26;
  nhb_cse28 = nhb_cse19*nhb_cse20 + nhb_cse25*nhb_cse27;
  nhb_cse29 = nhb_cse5*r;
  nhb_cse30 = nhb_cse1*nhb_cse2;
  nhb_cse31 = nhb_cse21*(2*nhb_cse12*nhb_cse3 + nhb_cse24*nhb_cse4 + 2*nhb_cse7) + nhb_cse23;
  nhb_cse32 = m*nhb_cse2;
  nhb_cse33 = nhb_cse29*nhb_cse32;
  nhb_cse34 = nhb_cse29*nhb_cse30 + nhb_cse31*nhb_cse33;
  nhb_cse35 = r^3;
  nhb_cse36 = (0.5)*nhb_cse17*nhb_cse35;
  nhb_cse37 = nhb_cse11*nhb_cse36 - nhb_cse19;
  nhb_cse38 = -m;
  nhb_cse39 = nhb_cse13*nhb_cse3;
  nhb_cse40 = nhb_cse17*nhb_cse6;
  nhb_cse41 = nhb_cse26*nhb_cse29;
  nhb_cse42 = nhb_cse20*nhb_cse29 + nhb_cse25*nhb_cse41;
  nhb_cse43 = nhb_cse19*nhb_cse32;
  nhb_cse44 = -nhb_cse19*nhb_cse30 - nhb_cse31*nhb_cse43;
  nhb_cse45 = -nhb_cse29 + nhb_cse36*nhb_cse5;
  nhb_cse46 = (0.25)*nhb_cse1*r^4;
  nhb_cse47 = nhb_cse10*nhb_cse46;
  nhb_cse48 = nhb_cse22*nhb_cse25*nhb_cse9 + nhb_cse46*nhb_cse9;
  nhb_cse49 = nhb_cse21*nhb_cse35;
  nhb_cse50 = nhb_cse11*nhb_cse49;
  nhb_cse51 = -nhb_cse27 + nhb_cse50*nhb_cse9;
  nhb_cse52 = nhb_cse49*nhb_cse5;
  nhb_cse53 = -nhb_cse41 + nhb_cse52*nhb_cse9;
  nhb_cse54 = -nhb_cse33;
  nhb_cse55 = der_psi*nhb_cse29;
  nhb_cse56 = der_psi*nhb_cse9;
  nhb_cse57 = nhb_cse19*nhb_cse2;
  nhb_cse58 = -der_theta*nhb_cse57 + nhb_cse29*nhb_cse56;
  nhb_cse59 = -nhb_cse58;
  nhb_cse60 = der_psi*m;
  nhb_cse61 = der_theta*nhb_cse29;
  nhb_cse62 = der_psi*nhb_cse57 - nhb_cse61*nhb_cse9;
  nhb_cse63 = der_theta*m;
  nhb_cse64 = nhb_cse59*nhb_cse60 + nhb_cse62*nhb_cse63;
  nhb_cse65 = -m*nhb_cse64;
  nhb_cse66 = nhb_cse19*nhb_cse56 + nhb_cse2*nhb_cse61;
  nhb_cse67 = 2*der_x + 2*nhb_cse66;
  nhb_cse68 = 2*der_y + 2*nhb_cse58;
  nhb_cse69 = nhb_cse29*nhb_cse9;
  nhb_cse70 = 2*nhb_cse66;
  nhb_cse71 = nhb_cse19*nhb_cse9;
  nhb_cse72 = 2*nhb_cse71;
  nhb_cse73 = -nhb_cse67*nhb_cse69 + nhb_cse68*nhb_cse71;
  nhb_cse74 = der_psi*nhb_cse21;
  nhb_cse75 = der_phi + nhb_cse56;
  nhb_cse76 = der_theta*nhb_cse71 + nhb_cse2*nhb_cse55;
  nhb_cse77 = 2*nhb_cse76;
  nhb_cse78 = nhb_cse2*nhb_cse29;
  nhb_cse79 = nhb_cse57*nhb_cse67 + nhb_cse68*nhb_cse78;
  nhb_cse80 = -der_theta*(nhb_cse2*nhb_cse22*nhb_cse75 + nhb_cse21*(nhb_cse62*nhb_cse72 + nhb_cse69*nhb_cse77 + nhb_cse79)) + (0.5)*m*(nhb_cse59*nhb_cse67 + nhb_cse66*nhb_cse68) - nhb_cse74*(nhb_cse59*nhb_cse72 + nhb_cse69*nhb_cse70 + nhb_cse73);
  nhb_cse81 = nhb_cse2*nhb_cse9;
  nhb_cse82 = nhb_cse4*nhb_cse81;
  nhb_cse83 = 2*nhb_cse78;
  nhb_cse84 = -der_psi^2*nhb_cse23*nhb_cse81 + (0.5)*der_psi*m*nhb_cse2*nhb_cse4*nhb_cse75 - der_theta*nhb_cse21*(4*der_theta*nhb_cse82 - nhb_cse57*nhb_cse77 + nhb_cse62*nhb_cse83 + nhb_cse73) + g*m*nhb_cse9*r + (0.5)*m*(2*der_theta^2*nhb_cse82 + nhb_cse62*nhb_cse67 + nhb_cse68*nhb_cse76) - nhb_cse74*(-nhb_cse57*nhb_cse70 + nhb_cse59*nhb_cse83 + nhb_cse79);
  nhb_cse85 = nhb_cse60*nhb_cse66 + nhb_cse63*nhb_cse76;
  nhb_cse86 = -m*nhb_cse85;
  nhb_cse87 = der_theta*nhb_cse2*nhb_cse46;
  nhb_cse88 = der_psi*der_theta*nhb_cse2;
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  der_der_phi*nhb_cse37 + der_der_psi*nhb_cse28 + der_der_theta*nhb_cse34 + der_der_x*(nhb_cse14 + nhb_cse15 + nhb_cse8) + der_der_y*nhb_cse18 + lambda[1]*nhb_cse38 = -der_phi*nhb_cse55 + nhb_cse27*nhb_cse80 + nhb_cse33*nhb_cse84 + nhb_cse65;
  der_der_phi*nhb_cse45 + der_der_psi*nhb_cse42 + der_der_theta*nhb_cse44 + der_der_x*nhb_cse18 + der_der_y*(nhb_cse15 + nhb_cse39 + nhb_cse40) + lambda[2]*nhb_cse38 = der_phi*der_psi*nhb_cse19 + nhb_cse41*nhb_cse80 - nhb_cse43*nhb_cse84 + nhb_cse86;
  der_der_phi*nhb_cse48 + der_der_psi*(nhb_cse14 + nhb_cse25^2 + nhb_cse40 + nhb_cse47) + der_der_x*nhb_cse28 + der_der_y*nhb_cse42 + lambda[1]*nhb_cse51 + lambda[2]*nhb_cse53 = nhb_cse25*nhb_cse80 - nhb_cse56*nhb_cse87 + nhb_cse65*nhb_cse71 + nhb_cse69*nhb_cse86;
  der_der_theta*(nhb_cse31^2 + nhb_cse39 + nhb_cse8) + der_der_x*nhb_cse34 + der_der_y*nhb_cse44 + lambda[1]*nhb_cse54 + lambda[2]*nhb_cse43 = nhb_cse31*nhb_cse84 - nhb_cse57*nhb_cse86 + nhb_cse65*nhb_cse78;
  der_der_phi*(nhb_cse12 + nhb_cse46 + nhb_cse47 + nhb_cse6) + der_der_psi*nhb_cse48 + der_der_x*nhb_cse37 + der_der_y*nhb_cse45 + lambda[1]*nhb_cse50 + lambda[2]*nhb_cse52 = -der_psi*nhb_cse87 + (0.5)*m*nhb_cse4*nhb_cse80*nhb_cse9;
  // constraints at acceleration level (index 1)
  // constraints.nonholonomic[1]
  der_der_phi*nhb_cse50 + der_der_psi*nhb_cse51 + der_der_theta*nhb_cse54 + der_der_x*nhb_cse38 + lambda[1]*(nhb_cse12 + 1) + lambda[2]*nhb_cse16 = -nhb_cse50*nhb_cse88 + nhb_cse64;
  // constraints.nonholonomic[2]
  der_der_phi*nhb_cse52 + der_der_psi*nhb_cse53 + der_der_theta*nhb_cse43 + der_der_y*nhb_cse38 + lambda[1]*nhb_cse16 + lambda[2]*(nhb_cse6 + 1) = -nhb_cse52*nhb_cse88 + nhb_cse85;
  // constraint residuals (velocity level)
  residual[1] = -der_phi*r*cos(psi) + der_x;
  residual[2] = -der_phi*r*sin(psi) + der_y;
  // outputs
  lean = theta;
  speed = der_phi*r;
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=5.0, Interval=0.005, Tolerance=1e-08),
    Documentation(info="<html>
<p>Thin uniform disk rolling without slipping on a horizontal plane. (x, y) is the contact point, psi the heading (yaw of the disk plane), theta the lean from upright (about the heading direction), phi the spin about the axle. Upright rolling at spin rate W is a steady motion; it is stable when W^2 &gt; g/(3 r) (Routh): nhbridge linearize examples/rolling_disk.toml --sweep \"der(phi)=0:8:81\".</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Export form (chosen automatically): variables-normal: the dynamics rows of psi, theta hold no multiplier but couple several accelerations; Rumoca 0.9 factorises such an implicit DAE as structurally singular (docs/compiler-defects), so the accelerations and multipliers are algebraic variables and their linear block K [a, lambda] = F is written as normal equations (K^T K) [a, lambda] = K^T F, whose diagonal never vanishes (Rumoca solves algebraic blocks row by row).</p>
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
