within NonholonomicExamples;
model RollingSphere "Uniform sphere rolling without slipping on a horizontal plane (Do Sanh, 'A form of equation of motion for Chaplyghin's systems', Example 1). Euler angles: psi precession, theta nutation, phi spin; (x, y) is the centre of the sphere. Kinetic energy as in the inertia matrix (3.4); the printed (3.1) drops the J/2*der(psi)^2 term. Chaplygin system with 3 degrees of freedom; cos(theta)*der(phi) + der(psi) (the vertical angular velocity) is a first integral."
  // parameters
  parameter Real m(unit="kg") = 2.0 "mass of the sphere";
  parameter Real a(unit="m") = 0.1 "radius of the sphere";
  parameter Real J(unit="kg.m2") = 0.008 "moment of inertia about a diameter (2/5*m*a^2 for a uniform sphere)";
  // generalized coordinates
  Real theta(start=0.7, fixed=true, unit="rad") "nutation angle (Euler angle between body and space z axes)";
  Real phi(start=0.0, fixed=true, unit="rad") "spin angle (proper rotation, Euler angle)";
  Real psi(start=0.3, fixed=true, unit="rad") "precession angle (Euler angle about the vertical)";
  Real x(start=0.0, fixed=true, unit="m") "centre of the sphere, x";
  Real y(start=0.0, fixed=true, unit="m") "centre of the sphere, y";
  // generalized velocities
  Real der_theta(start=0.5, fixed=true, unit="rad/s") "velocity der(theta)";
  Real der_phi(start=2.0, fixed=true, unit="rad/s") "velocity der(phi)";
  Real der_psi(start=-1.0, fixed=true, unit="rad/s") "velocity der(psi)";
  Real der_x(start=-0.10831292237858771, fixed=true, unit="m/s") "velocity der(x)";
  Real der_y(start=-0.08584269326975483, fixed=true, unit="m/s") "velocity der(y)";
  Real der_der_theta(unit="rad/s2") "acceleration der(der(theta))";
  Real der_der_phi(unit="rad/s2") "acceleration der(der(phi))";
  Real der_der_psi(unit="rad/s2") "acceleration der(der(psi))";
  Real der_der_x(unit="m/s2") "acceleration der(der(x))";
  Real der_der_y(unit="m/s2") "acceleration der(der(y))";
  Real lambda[2](each unit="N") "constraint multipliers: generalized constraint forces A^T*lambda";
  output Real omega_z(unit="rad/s") "spin about the vertical (a first integral)";
  output Real kinetic_energy(unit="N.m") "output kinetic_energy";
  Real residual[2](each unit="m/s") "constraint residuals at velocity level (holonomic ones differentiated); stay near 0";
protected
  Real nhb_cse1(unit="m") "common subexpression";
  Real nhb_cse2(unit="m") "common subexpression";
  Real nhb_cse3(unit="1") "common subexpression";
  Real nhb_cse4(unit="kg.m2") "common subexpression";
  Real nhb_cse5(unit="1") "common subexpression";
  Real nhb_cse6(unit="m") "common subexpression";
  Real nhb_cse7(unit="m") "common subexpression";
  Real nhb_cse8(unit="kg.m2/s") "common subexpression";
  Real nhb_cse9(unit="m/s") "common subexpression";
  Real nhb_cse10(unit="1/s") "common subexpression";
  Real nhb_cse11(unit="m/s") "common subexpression";
equation
  // kinematics
  der(theta) = der_theta;
  der(phi) = der_phi;
  der(psi) = der_psi;
  der(x) = der_x;
  der(y) = der_y;
  der(der_theta) = der_der_theta;
  der(der_phi) = der_der_phi;
  der(der_psi) = der_der_psi;
  der(der_x) = der_der_x;
  der(der_y) = der_der_y;
  // common subexpressions
  nhb_cse1 = a*sin(psi);
  nhb_cse2 = a*cos(psi);
  nhb_cse3 = cos(theta);
  nhb_cse4 = J*nhb_cse3;
  nhb_cse5 = sin(theta);
  nhb_cse6 = nhb_cse2*nhb_cse5;
  nhb_cse7 = nhb_cse1*nhb_cse5;
  nhb_cse8 = J*der_psi*nhb_cse5;
  nhb_cse9 = der_theta*nhb_cse2;
  nhb_cse10 = der_phi*nhb_cse3;
  nhb_cse11 = der_theta*nhb_cse1;
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  J*der_der_theta + lambda[1]*nhb_cse1 - lambda[2]*nhb_cse2 = -der_phi*nhb_cse8;
  J*der_der_phi + der_der_psi*nhb_cse4 - lambda[1]*nhb_cse6 - lambda[2]*nhb_cse7 = der_theta*nhb_cse8;
  J*der_der_psi + der_der_phi*nhb_cse4 = J*der_phi*der_theta*nhb_cse5;
  der_der_x*m - lambda[1] = 0;
  der_der_y*m - lambda[2] = 0;
  // constraints at acceleration level (index 1)
  // constraints.nonholonomic[1]
  der_der_phi*nhb_cse6 - der_der_theta*nhb_cse1 + der_der_x = -der_psi*(-der_phi*nhb_cse7 - nhb_cse9) - nhb_cse10*nhb_cse9;
  // constraints.nonholonomic[2]
  der_der_phi*nhb_cse7 + der_der_theta*nhb_cse2 + der_der_y = -der_psi*(der_phi*nhb_cse6 - nhb_cse11) - nhb_cse10*nhb_cse11;
  // constraint residuals (velocity level)
  residual[1] = a*der_phi*sin(theta)*cos(psi) - a*der_theta*sin(psi) + der_x;
  residual[2] = a*der_phi*sin(psi)*sin(theta) + a*der_theta*cos(psi) + der_y;
  // outputs
  omega_z = der(phi)*cos(theta) + der(psi);
  kinetic_energy = (0.5)*J*(der(phi)^2 + 2*der(phi)*der(psi)*cos(theta) + der(psi)^2 + der(theta)^2) + (0.5)*m*(der(x)^2 + der(y)^2);
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=10.0, Interval=0.01, Tolerance=1e-08),
    Documentation(info="<html>
<p>Uniform sphere rolling without slipping on a horizontal plane (Do Sanh, 'A form of equation of motion for Chaplyghin's systems', Example 1). Euler angles: psi precession, theta nutation, phi spin; (x, y) is the centre of the sphere. Kinetic energy as in the inertia matrix (3.4); the printed (3.1) drops the J/2*der(psi)^2 term. Chaplygin system with 3 degrees of freedom; cos(theta)*der(phi) + der(psi) (the vertical angular velocity) is a first integral.</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Export form (chosen automatically): variables: the accelerations of phi are coupled in the rows Rumoca 0.9 takes as their derivative rows and held by the constraint rows it leaves to its algebraic part; Rumoca 0.9 factorises such an implicit DAE as structurally singular (docs/compiler-defects), so the accelerations are algebraic variables der_der_q with der(der_q) = der_der_q and no other row holds a derivative.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.5)*J*(der(phi)^2 + 2*der(phi)*der(psi)*cos(theta) + der(psi)^2 + der(theta)^2) + (0.5)*m*(der(x)^2 + der(y)^2)</code></li>
<li>constraints.nonholonomic[1]: <code>a*der(phi)*sin(theta)*cos(psi) - a*der(theta)*sin(psi) + der(x)</code> = 0</li>
<li>constraints.nonholonomic[2]: <code>a*der(phi)*sin(psi)*sin(theta) + a*der(theta)*cos(psi) + der(y)</code> = 0</li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q + A^T*lambda</code> with the multipliers <code>lambda</code>, the constraints differentiated to acceleration level (index 1); <code>A</code> is the Jacobian of the velocity-level constraints <code>A*der(q) + a0 = 0</code>.</p>
</html>"));
end RollingSphere;
