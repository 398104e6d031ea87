within NonholonomicExamples;
model RollingWheel "Modelica.Mechanics.MultiBody.Examples.Elementary.RollingWheel (MSL) with a body and a rolling-disk contact: a wheel rolling without slip on the ground z = 0, gravity -z; parameters and start values of the MSL (x = y = 0.2 m, der_angles {0, 5, 1}), with yaw, lean, spin coordinates and a start lean of 1 mrad instead of 0: upright, the yaw rate does not move the contact point, and Rumoca 0.9 fails where that coefficient vanishes."
  // parameters
  parameter Real R(unit="m") = 0.3 "wheel radius";
  parameter Real m(unit="kg") = 2.0 "wheel mass";
  parameter Real I_axis(unit="kg.m2") = 0.06 "inertia about the wheel axis";
  parameter Real I_long(unit="kg.m2") = 0.12 "inertia about a diameter";
  parameter Real g(unit="m/s2") = 9.81 "gravity";
  // generalized coordinates
  Real x(start=0.2, fixed=true, unit="m") "wheel centre, x";
  Real y(start=0.2, fixed=true, unit="m") "wheel centre, y";
  Real psi(start=0.0, fixed=true, unit="rad") "yaw about N.z";
  Real theta(start=0.001, fixed=true, unit="rad") "lean about the yawed x axis";
  Real phi(start=0.0, fixed=true, unit="rad") "spin about the wheel axis y";
  // generalized velocities
  Real der_x(start=1.5, fixed=true, unit="m/s") "velocity der(x)";
  Real der_y(start=-0.2999998500000125, fixed=true, unit="m/s") "velocity der(y)";
  Real der_psi(start=0.0, fixed=true, unit="rad/s") "velocity der(psi)";
  Real der_theta(start=1.0, fixed=true, unit="rad/s") "velocity der(theta)";
  Real der_phi(start=5.0, fixed=true, unit="rad/s") "velocity der(phi)";
  Real der_der_x(unit="m/s2") "acceleration der(der(x))";
  Real der_der_y(unit="m/s2") "acceleration der(der(y))";
  Real der_der_psi(unit="rad/s2") "acceleration der(der(psi))";
  Real der_der_theta(unit="rad/s2") "acceleration der(der(theta))";
  Real der_der_phi(unit="rad/s2") "acceleration der(der(phi))";
  Real lambda[2](each unit="N") "constraint multipliers: generalized constraint forces A^T*lambda";
  Real residual[2](each unit="m/s") "constraint residuals at velocity level (holonomic ones differentiated); stay near 0";
protected
  Real nhb_cse1(unit="1") "common subexpression";
  Real nhb_cse2(unit="1") "common subexpression";
  Real nhb_cse3(unit="1") "common subexpression";
  Real nhb_cse4(unit="1") "common subexpression";
  Real nhb_cse5(unit="1") "common subexpression";
  Real nhb_cse6(unit="1") "common subexpression";
  Real nhb_cse7(unit="1") "common subexpression";
  Real nhb_cse8(unit="1") "common subexpression";
  Real nhb_cse9(unit="1") "common subexpression";
  Real nhb_cse10(unit="1") "common subexpression";
  Real nhb_cse11(unit="kg.m2") "common subexpression";
  Real nhb_cse12(unit="1") "common subexpression";
  Real nhb_cse13(unit="kg.m2") "common subexpression";
  Real nhb_cse14(unit="kg.m2") "common subexpression";
  Real nhb_cse15(unit="1") "common subexpression";
  Real nhb_cse16(unit="1") "common subexpression";
  Real nhb_cse17(unit="1") "common subexpression";
  Real nhb_cse18(unit="1") "common subexpression";
  Real nhb_cse19(unit="m") "common subexpression";
  Real nhb_cse20(unit="m") "common subexpression";
  Real nhb_cse21(unit="m") "common subexpression";
  Real nhb_cse22(unit="1") "common subexpression";
  Real nhb_cse23(unit="m") "common subexpression";
  Real nhb_cse24(unit="kg.m2") "common subexpression";
  Real nhb_cse25(unit="m") "common subexpression";
  Real nhb_cse26(unit="m") "common subexpression";
  Real nhb_cse27(unit="m") "common subexpression";
  Real nhb_cse28(unit="m") "common subexpression";
  Real nhb_cse29(unit="m") "common subexpression";
  Real nhb_cse30(unit="m") "common subexpression";
  Real nhb_cse31(unit="1") "common subexpression";
  Real nhb_cse32(unit="1/s") "common subexpression";
  Real nhb_cse33(unit="1/s") "common subexpression";
  Real nhb_cse34(unit="kg.m2") "common subexpression";
  Real nhb_cse35(unit="1/s") "common subexpression";
  Real nhb_cse36(unit="1/s") "common subexpression";
  Real nhb_cse37(unit="kg.m2/s") "common subexpression";
  Real nhb_cse38(unit="1/s") "common subexpression";
  Real nhb_cse39(unit="kg.m2/s") "common subexpression";
  Real nhb_cse40(unit="kg.m2/s") "common subexpression";
  Real nhb_cse41(unit="kg.m2") "common subexpression";
  Real nhb_cse42(unit="kg.m2/s") "common subexpression";
  Real nhb_cse43(unit="1/s") "common subexpression";
  Real nhb_cse44(unit="1/s") "common subexpression";
  Real nhb_cse45(unit="1/s") "common subexpression";
  Real nhb_cse46(unit="m/s") "common subexpression";
  Real nhb_cse47(unit="m/s") "common subexpression";
  Real nhb_cse48(unit="m/s") "common subexpression";
  Real nhb_cse49(unit="1/s") "common subexpression";
  Real nhb_cse50(unit="m/s") "common subexpression";
  Real nhb_cse51(unit="m/s") "common subexpression";
  Real nhb_cse52(unit="m/s") "common subexpression";
  Real nhb_cse53(unit="m/s") "common subexpression";
  Real nhb_cse54(unit="m/s") "common subexpression";
  Real nhb_cse55(unit="m") "common subexpression";
  Real nhb_cse56(unit="m/s") "common subexpression";
  Real nhb_cse57(unit="1/s") "common subexpression";
  Real nhb_cse58(unit="m") "common subexpression";
  Real nhb_cse59(unit="m") "common subexpression";
  Real nhb_cse60(unit="m/s") "common subexpression";
  Real nhb_cse61(unit="1/s") "common subexpression";
  Real nhb_cse62(unit="m/s") "common subexpression";
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
  nhb_cse2 = cos(theta);
  nhb_cse3 = nhb_cse1*nhb_cse2;
  nhb_cse4 = sin(psi);
  nhb_cse5 = nhb_cse2*nhb_cse4;
  nhb_cse6 = -nhb_cse3;
  nhb_cse7 = sin(theta);
  nhb_cse8 = nhb_cse7^2;
  nhb_cse9 = nhb_cse2^2;
  nhb_cse10 = sin(phi);
  nhb_cse11 = I_long*nhb_cse10^2;
  nhb_cse12 = cos(phi);
  nhb_cse13 = I_long*nhb_cse12^2;
  nhb_cse14 = I_axis*nhb_cse7;
  nhb_cse15 = nhb_cse4^2;
  nhb_cse16 = 1 - nhb_cse8;
  nhb_cse17 = sqrt(nhb_cse16);
  nhb_cse18 = 1.0/nhb_cse17;
  nhb_cse19 = R*nhb_cse7;
  nhb_cse20 = nhb_cse18*nhb_cse19;
  nhb_cse21 = nhb_cse20*nhb_cse9;
  nhb_cse22 = nhb_cse1^2;
  nhb_cse23 = nhb_cse15*nhb_cse21 + nhb_cse21*nhb_cse22;
  nhb_cse24 = R^2*m;
  nhb_cse25 = R*nhb_cse17;
  nhb_cse26 = nhb_cse2*nhb_cse25;
  nhb_cse27 = nhb_cse15*nhb_cse26 + nhb_cse22*nhb_cse26;
  nhb_cse28 = R*nhb_cse18;
  nhb_cse29 = nhb_cse28*nhb_cse8;
  nhb_cse30 = nhb_cse3*(-nhb_cse25*nhb_cse3 - nhb_cse29*nhb_cse3) + nhb_cse5*(-nhb_cse25*nhb_cse5 - nhb_cse29*nhb_cse5);
  nhb_cse31 = -nhb_cse5;
  nhb_cse32 = der_psi*nhb_cse2;
  nhb_cse33 = der_theta*nhb_cse10 + nhb_cse12*nhb_cse32;
  nhb_cse34 = I_long*nhb_cse10*nhb_cse2;
  nhb_cse35 = -nhb_cse33;
  nhb_cse36 = der_psi*nhb_cse7;
  nhb_cse37 = I_axis*(der_phi + nhb_cse36);
  nhb_cse38 = nhb_cse2*nhb_cse36;
  nhb_cse39 = I_long*(der_theta*nhb_cse12 - nhb_cse10*nhb_cse32);
  nhb_cse40 = nhb_cse10*nhb_cse39;
  nhb_cse41 = I_long*nhb_cse12;
  nhb_cse42 = nhb_cse33*nhb_cse41;
  nhb_cse43 = -der_phi*nhb_cse5 + der_theta*nhb_cse1;
  nhb_cse44 = der_phi*nhb_cse7;
  nhb_cse45 = der_psi + nhb_cse44;
  nhb_cse46 = nhb_cse20*nhb_cse45;
  nhb_cse47 = nhb_cse25*nhb_cse43 - nhb_cse46*nhb_cse5;
  nhb_cse48 = -nhb_cse47;
  nhb_cse49 = der_phi*nhb_cse3 + der_theta*nhb_cse4;
  nhb_cse50 = nhb_cse3*nhb_cse46;
  nhb_cse51 = -nhb_cse25*nhb_cse49 - nhb_cse50;
  nhb_cse52 = der_y + nhb_cse47;
  nhb_cse53 = der_x - nhb_cse25*nhb_cse49 - nhb_cse50;
  nhb_cse54 = nhb_cse52*nhb_cse7;
  nhb_cse55 = nhb_cse28*nhb_cse9;
  nhb_cse56 = nhb_cse44*nhb_cse55;
  nhb_cse57 = nhb_cse1*nhb_cse45;
  nhb_cse58 = nhb_cse2*nhb_cse20;
  nhb_cse59 = R*nhb_cse8*nhb_cse9/nhb_cse16^(1.5);
  nhb_cse60 = nhb_cse1*nhb_cse25*nhb_cse44 - nhb_cse1*nhb_cse56 + nhb_cse29*nhb_cse57 + nhb_cse49*nhb_cse58 - nhb_cse55*nhb_cse57 - nhb_cse57*nhb_cse59;
  nhb_cse61 = nhb_cse4*nhb_cse45;
  nhb_cse62 = R*der_phi*nhb_cse17*nhb_cse4*nhb_cse7 + R*nhb_cse18*nhb_cse4*nhb_cse45*nhb_cse8 - nhb_cse4*nhb_cse56 - nhb_cse43*nhb_cse58 - nhb_cse55*nhb_cse61 - nhb_cse59*nhb_cse61;
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  der_der_x*m + lambda[1]*nhb_cse3 + lambda[2]*nhb_cse5 = 0;
  der_der_y*m + lambda[1]*nhb_cse5 + lambda[2]*nhb_cse6 = 0;
  der_der_phi*nhb_cse14 + der_der_psi*(I_axis*nhb_cse8 + nhb_cse11*nhb_cse9 + nhb_cse13*nhb_cse9) - lambda[1]*nhb_cse23 = -der_phi*(-nhb_cse33*nhb_cse34 - nhb_cse34*nhb_cse35) - der_theta*(-nhb_cse11*nhb_cse38 - nhb_cse13*nhb_cse38 + nhb_cse14*nhb_cse32 + nhb_cse2*nhb_cse37 + nhb_cse40*nhb_cse7 - nhb_cse42*nhb_cse7);
  der_der_theta*(nhb_cse11 + nhb_cse13 + nhb_cse24*nhb_cse8) - lambda[2]*nhb_cse27 = -der_phi*(nhb_cse35*nhb_cse41 + nhb_cse42) - der_theta^2*nhb_cse2*nhb_cse24*nhb_cse7 + g*m*nhb_cse19 + nhb_cse32*nhb_cse37 + nhb_cse36*nhb_cse40 - nhb_cse36*nhb_cse42;
  I_axis*der_der_phi + der_der_psi*nhb_cse14 + lambda[1]*nhb_cse30 = -I_axis*der_theta*nhb_cse32 + nhb_cse33*nhb_cse39 + nhb_cse35*nhb_cse39;
  // constraints at acceleration level (index 1)
  // contacts.wheel (no slip along its heading)
  -der_der_phi*nhb_cse30 + der_der_psi*nhb_cse23 + der_der_x*nhb_cse6 + der_der_y*nhb_cse31 = -der_psi*(nhb_cse2*nhb_cse4*nhb_cse53 - nhb_cse3*nhb_cse48 - nhb_cse3*nhb_cse52 - nhb_cse5*nhb_cse51) - der_theta*(nhb_cse1*nhb_cse53*nhb_cse7 - nhb_cse3*nhb_cse60 + nhb_cse4*nhb_cse54 - nhb_cse5*nhb_cse62);
  // contacts.wheel (no slip along its axle)
  der_der_theta*nhb_cse27 + der_der_x*nhb_cse31 + der_der_y*nhb_cse3 = -der_psi*(nhb_cse1*nhb_cse2*nhb_cse51 - nhb_cse3*nhb_cse53 - nhb_cse48*nhb_cse5 - nhb_cse5*nhb_cse52) - der_theta*(nhb_cse1*nhb_cse2*nhb_cse62 - nhb_cse1*nhb_cse54 + nhb_cse4*nhb_cse53*nhb_cse7 - nhb_cse5*nhb_cse60);
  // constraint residuals (velocity level)
  residual[1] = -(R*sqrt(1 - sin(theta)^2)*(-der_phi*sin(psi)*cos(theta) + der_theta*cos(psi)) - R*(der_phi*sin(theta) + der_psi)*sin(psi)*sin(theta)*cos(theta)/sqrt(1 - sin(theta)^2) + der_y)*sin(psi)*cos(theta) - (-R*sqrt(1 - sin(theta)^2)*(der_phi*cos(psi)*cos(theta) + der_theta*sin(psi)) - R*(der_phi*sin(theta) + der_psi)*sin(theta)*cos(psi)*cos(theta)/sqrt(1 - sin(theta)^2) + der_x)*cos(psi)*cos(theta);
  residual[2] = (R*sqrt(1 - sin(theta)^2)*(-der_phi*sin(psi)*cos(theta) + der_theta*cos(psi)) - R*(der_phi*sin(theta) + der_psi)*sin(psi)*sin(theta)*cos(theta)/sqrt(1 - sin(theta)^2) + der_y)*cos(psi)*cos(theta) - (-R*sqrt(1 - sin(theta)^2)*(der_phi*cos(psi)*cos(theta) + der_theta*sin(psi)) - R*(der_phi*sin(theta) + der_psi)*sin(theta)*cos(psi)*cos(theta)/sqrt(1 - sin(theta)^2) + der_x)*sin(psi)*cos(theta);
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=4.0, Interval=0.004, Tolerance=1e-08),
    Documentation(info="<html>
<p>Modelica.Mechanics.MultiBody.Examples.Elementary.RollingWheel (MSL) with a body and a rolling-disk contact: a wheel rolling without slip on the ground z = 0, gravity -z; parameters and start values of the MSL (x = y = 0.2 m, der_angles {0, 5, 1}), with yaw, lean, spin coordinates and a start lean of 1 mrad instead of 0: upright, the yaw rate does not move the contact point, and Rumoca 0.9 fails where that coefficient vanishes.</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Export form (chosen automatically): variables: the accelerations of psi, phi are coupled in the rows Rumoca 0.9 takes as their derivative rows and held by the constraint rows it leaves to its algebraic part; Rumoca 0.9 factorises such an implicit DAE as structurally singular (docs/compiler-defects), so the accelerations are algebraic variables der_der_q with der(der_q) = der_der_q and no other row holds a derivative.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.5)*I_axis*(der(phi) + der(psi)*sin(theta))^2 + (0.5)*I_long*(-der(psi)*sin(phi)*cos(theta) + der(theta)*cos(phi))^2 + (0.5)*I_long*(der(psi)*cos(phi)*cos(theta) + der(theta)*sin(phi))^2 + (0.5)*m*(R^2*der(theta)^2*sin(theta)^2 + der(x)^2 + der(y)^2)</code></li>
<li>V = <code>R*g*m*cos(theta)</code></li>
<li>contacts.wheel (no slip along its heading): <code>-(R*sqrt(1 - sin(theta)^2)*(-der(phi)*sin(psi)*cos(theta) + der(theta)*cos(psi)) - R*(der(phi)*sin(theta) + der(psi))*sin(psi)*sin(theta)*cos(theta)/sqrt(1 - sin(theta)^2) + der(y))*sin(psi)*cos(theta) - (-R*sqrt(1 - sin(theta)^2)*(der(phi)*cos(psi)*cos(theta) + der(theta)*sin(psi)) - R*(der(phi)*sin(theta) + der(psi))*sin(theta)*cos(psi)*cos(theta)/sqrt(1 - sin(theta)^2) + der(x))*cos(psi)*cos(theta)</code> = 0</li>
<li>contacts.wheel (no slip along its axle): <code>(R*sqrt(1 - sin(theta)^2)*(-der(phi)*sin(psi)*cos(theta) + der(theta)*cos(psi)) - R*(der(phi)*sin(theta) + der(psi))*sin(psi)*sin(theta)*cos(theta)/sqrt(1 - sin(theta)^2) + der(y))*cos(psi)*cos(theta) - (-R*sqrt(1 - sin(theta)^2)*(der(phi)*cos(psi)*cos(theta) + der(theta)*sin(psi)) - R*(der(phi)*sin(theta) + der(psi))*sin(theta)*cos(psi)*cos(theta)/sqrt(1 - sin(theta)^2) + der(x))*sin(psi)*cos(theta)</code> = 0</li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q + A^T*lambda</code> with the multipliers <code>lambda</code>, the constraints differentiated to acceleration level (index 1); <code>A</code> is the Jacobian of the velocity-level constraints <code>A*der(q) + a0 = 0</code>.</p>
</html>"));
end RollingWheel;
