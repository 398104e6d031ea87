within NonholonomicExamples;
model VibratoryExciter "Vibratory device with a controlled two-unbalance exciter of circular translational vibrations (Zhyhylii, Poltava 2024, 'On Lagrange's equations of the second kind and Nielsen's equations'): platform centre (xC, yC) on springs kx, ky, drive rotation varphi, control (phase) angle theta between the two unbalances (theta = 0: the unbalances cancel). Kinetic energy exactly the printed 11 terms (M, m, I1, I2, e); the inertia matrix is positive definite for all angles with these values (Schur complement determinant >= 7.1e-5 kg^2.m^4). Motor torque Md - cd*der(varphi) on varphi; a PD controller -kt*(theta - theta_ref) - ct*der(theta) holds the phase angle."
  // parameters
  parameter Real M(unit="kg") = 50.0 "total mass of the vibrating part";
  parameter Real m(unit="kg") = 2.0 "mass of one unbalance";
  parameter Real e(unit="m") = 0.05 "eccentricity of the unbalances";
  parameter Real I1(unit="kg.m2") = 0.02 "moment of inertia of the rotating parts about the drive axis";
  parameter Real I2(unit="kg.m2") = 0.005 "moment of inertia of the phase-shifted rotor";
  parameter Real kx(unit="N/m") = 20000.0 "stiffness of the suspension in x";
  parameter Real ky(unit="N/m") = 20000.0 "stiffness of the suspension in y";
  parameter Real Md(unit="N.m") = 2.0 "motor stall torque";
  parameter Real cd(unit="N.m.s/rad") = 0.02 "slope of the motor torque-speed characteristic";
  parameter Real kt(unit="N.m/rad") = 10.0 "proportional gain of the phase controller";
  parameter Real ct(unit="N.m.s/rad") = 0.5 "derivative gain of the phase controller";
  parameter Real theta_ref(unit="rad") = 1.0 "phase angle set point";
  // generalized coordinates
  Real xC(start=0.0, fixed=true, unit="m") "x coordinate of the platform centre C";
  Real yC(start=0.0, fixed=true, unit="m") "y coordinate of the platform centre C";
  Real varphi(start=0.0, fixed=true, unit="rad") "rotation angle of the exciter drive";
  Real theta(start=1.0, fixed=true, unit="rad") "control angle (phase shift) between the two unbalances";
  // generalized velocities
  Real der_xC(start=0.0, fixed=true, unit="m/s") "velocity der(xC)";
  Real der_yC(start=0.0, fixed=true, unit="m/s") "velocity der(yC)";
  Real der_varphi(start=10.0, fixed=true, unit="rad/s") "velocity der(varphi)";
  Real der_theta(start=0.0, fixed=true, unit="rad/s") "velocity der(theta)";
  output Real amplitude(unit="m") "output amplitude";
protected
  Real nhb_cse1(unit="kg.m") "common subexpression";
  Real nhb_cse2(unit="kg.m") "common subexpression";
  Real nhb_cse3(unit="1") "common subexpression";
  Real nhb_cse4(unit="kg.m") "common subexpression";
  Real nhb_cse5(unit="kg.m") "common subexpression";
  Real nhb_cse6(unit="kg.m") "common subexpression";
  Real nhb_cse7(unit="1") "common subexpression";
  Real nhb_cse8(unit="kg.m") "common subexpression";
  Real nhb_cse9(unit="kg.m") "common subexpression";
  Real nhb_cse10(unit="kg.m") "common subexpression";
  Real nhb_cse11(unit="kg.m2") "common subexpression";
  Real nhb_cse12(unit="kg.m/s") "common subexpression";
  Real nhb_cse13(unit="kg.m/s") "common subexpression";
  Real nhb_cse14(unit="kg.m/s") "common subexpression";
  Real nhb_cse15(unit="kg.m/s") "common subexpression";
  Real nhb_cse16(unit="kg.m/s") "common subexpression";
  Real nhb_cse17(unit="kg.m/s") "common subexpression";
  Real nhb_cse18(unit="N.m") "common subexpression";
  Real nhb_cse19(unit="N.m") "common subexpression";
  Real nhb_cse20(unit="N.m") "common subexpression";
  Real nhb_cse21(unit="N.m") "common subexpression";
  Real nhb_cse22(unit="kg.m2/s") "common subexpression";
  Real nhb_cse23(unit="kg.m2/s") "common subexpression";
equation
  // kinematics
  der(xC) = der_xC;
  der(yC) = der_yC;
  der(varphi) = der_varphi;
  der(theta) = der_theta;
  // common subexpressions
  nhb_cse1 = e*m;
  nhb_cse2 = nhb_cse1*cos(varphi);
  nhb_cse3 = theta - varphi;
  nhb_cse4 = nhb_cse1*cos(nhb_cse3);
  nhb_cse5 = -nhb_cse4;
  nhb_cse6 = -nhb_cse2 - nhb_cse5;
  nhb_cse7 = sin(varphi);
  nhb_cse8 = nhb_cse1*nhb_cse7;
  nhb_cse9 = nhb_cse1*sin(nhb_cse3);
  nhb_cse10 = -nhb_cse8 - nhb_cse9;
  nhb_cse11 = -I2;
  nhb_cse12 = der_theta*nhb_cse9;
  nhb_cse13 = der_varphi*nhb_cse9;
  nhb_cse14 = der_theta*nhb_cse4;
  nhb_cse15 = der_varphi*nhb_cse4;
  nhb_cse16 = nhb_cse14 - nhb_cse15;
  nhb_cse17 = der_varphi*nhb_cse2;
  nhb_cse18 = der_xC*nhb_cse12;
  nhb_cse19 = der_yC*nhb_cse14;
  nhb_cse20 = der_xC*nhb_cse13;
  nhb_cse21 = der_yC*nhb_cse15;
  nhb_cse22 = der_xC*nhb_cse9 + der_yC*nhb_cse4;
  nhb_cse23 = -nhb_cse22;
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  M*der(der_xC) + der(der_theta)*nhb_cse5 + der(der_varphi)*nhb_cse6 = -der_theta*(nhb_cse12 - nhb_cse13) - der_varphi*(der_varphi*nhb_cse8 - nhb_cse12 + nhb_cse13) - kx*xC;
  M*der(der_yC) + der(der_theta)*nhb_cse9 + der(der_varphi)*nhb_cse10 = -der_theta*nhb_cse16 - der_varphi*(-nhb_cse16 - nhb_cse17) - ky*yC;
  I1*der(der_varphi) + der(der_theta)*nhb_cse11 + der(der_xC)*nhb_cse6 + der(der_yC)*nhb_cse10 = Md - cd*der_varphi - der_theta*nhb_cse23 + der_varphi*der_xC*e*m*nhb_cse7 - der_varphi*(der_xC*nhb_cse8 - der_yC*nhb_cse2 + nhb_cse22) - der_yC*nhb_cse17 - nhb_cse18 - nhb_cse19 + nhb_cse20 + nhb_cse21;
  I2*der(der_theta) + der(der_varphi)*nhb_cse11 + der(der_xC)*nhb_cse5 + der(der_yC)*nhb_cse9 = -ct*der_theta - der_theta*nhb_cse22 - der_varphi*nhb_cse23 - kt*(theta - theta_ref) + nhb_cse18 + nhb_cse19 - nhb_cse20 - nhb_cse21;
  // outputs
  amplitude = sqrt(xC^2 + yC^2);
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=5.0, Interval=0.005, Tolerance=1e-08),
    Documentation(info="<html>
<p>Vibratory device with a controlled two-unbalance exciter of circular translational vibrations (Zhyhylii, Poltava 2024, 'On Lagrange's equations of the second kind and Nielsen's equations'): platform centre (xC, yC) on springs kx, ky, drive rotation varphi, control (phase) angle theta between the two unbalances (theta = 0: the unbalances cancel). Kinetic energy exactly the printed 11 terms (M, m, I1, I2, e); the inertia matrix is positive definite for all angles with these values (Schur complement determinant &gt;= 7.1e-5 kg^2.m^4). Motor torque Md - cd*der(varphi) on varphi; a PD controller -kt*(theta - theta_ref) - ct*der(theta) holds the phase angle.</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Export form (chosen automatically): implicit: ODE with the accelerations implicit in M der(v) = F: no multiplier and no coupled split block, so no structure of docs/compiler-defects is present.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.5)*I1*der(varphi)^2 + (0.5)*I2*der(theta)^2 - I2*der(theta)*der(varphi) + (0.5)*M*der(xC)^2 + (0.5)*M*der(yC)^2 - der(theta)*der(xC)*e*m*cos(theta - varphi) + der(theta)*der(yC)*e*m*sin(theta - varphi) - der(varphi)*der(xC)*e*m*cos(varphi) + der(varphi)*der(xC)*e*m*cos(theta - varphi) - der(varphi)*der(yC)*e*m*sin(varphi) - der(varphi)*der(yC)*e*m*sin(theta - varphi)</code></li>
<li>V = <code>(0.5)*kx*xC^2 + (0.5)*ky*yC^2</code></li>
<li>Q<sub>varphi</sub> = <code>Md - cd*der(varphi)</code></li>
<li>Q<sub>theta</sub> = <code>-ct*der(theta) - kt*(theta - theta_ref)</code></li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q</code> (mass matrix implicit: <code>M*der(der(q)) = F</code>, solved by the tool).</p>
</html>"));
end VibratoryExciter;
