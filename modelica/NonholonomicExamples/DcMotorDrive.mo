within NonholonomicExamples;
model DcMotorDrive "The constant speed drive of examples/constant_speed_drive.toml driven by a separately excited DC motor instead of a torque-speed characteristic (seed Section 1.2.5: a DC motor is a regulated effort source). The armature current i is a dynamic variable, L*der(i) = U - R*i - eb; the motor torque tau and the back-emf eb are effort variables kept as algebraic effort constraints tau - kt*i = 0 and eb - ke*der(phi1) = 0 (Gamma(q, f, e, s, t) = 0 of the seed's eq. 4.4). Rolling constraint (x - c)*der(phi1) = R*der(phi2)."
  // parameters
  parameter Real I1(unit="kg.m2") = 0.05 "moment of inertia of the disc with shaft 1 and the motor's rotor";
  parameter Real I2(unit="kg.m2") = 0.01 "moment of inertia of the drum with shaft 2";
  parameter Real I3(unit="kg.m2") = 0.0001 "moment of inertia of the pulley about shaft 3";
  parameter Real m3(unit="kg") = 0.3 "mass of the pulley with shaft 3";
  parameter Real ms(unit="kg") = 0.1 "mass of the governor sleeve";
  parameter Real mb(unit="kg") = 0.2 "mass of one governor ball";
  parameter Real l(unit="m") = 0.1 "length of a governor rod";
  parameter Real Rd(unit="m") = 0.05 "radius of the drum on shaft 2";
  parameter Real a(unit="m") = 0.03 "radius of the pulley on shaft 3";
  parameter Real c(unit="m") = -0.25 "cable-geometry constant: the pulley rolls on the disc at radius x - c";
  parameter Real k2(unit="N/m") = 1500.0 "stiffness of the governor spring";
  parameter Real k3(unit="N/m") = 500.0 "stiffness of the pulley spring";
  parameter Real x0(unit="m") = 0.1 "sleeve position at which the springs are relaxed";
  parameter Real Mr(unit="N.m") = 0.2 "constant resisting torque of the driven machine";
  parameter Real cr(unit="N.m.s/rad") = 0.005 "viscous resisting torque coefficient of the driven machine";
  parameter Real Ra(unit="Ohm") = 1.0 "armature resistance";
  parameter Real La(unit="H") = 0.01 "armature inductance";
  parameter Real kt(unit="N.m/A") = 0.4 "torque constant";
  parameter Real ke(unit="V.s/rad") = 0.4 "back-emf constant";
  // inputs
  input Real U(start=12.0, unit="V") "armature voltage";
  // generalized coordinates
  Real phi1(start=0.0, fixed=true, unit="rad") "rotation angle of the driving shaft 1 (motor side)";
  Real phi2(start=0.0, fixed=true, unit="rad") "rotation angle of the driven shaft 2 (machine side)";
  Real x(start=0.1, fixed=true, unit="m", nominal=0.001) "translation of the governor sleeve and of the pulley on shaft 3";
  Real i_integral(start=0.0, fixed=true, unit="A.s") "time integral of the dynamic variable i (its flow is i)";
  // generalized velocities
  Real der_phi1(start=5.0, fixed=true, unit="rad/s") "velocity der(phi1)";
  Real der_phi2(start=34.99999999999999, fixed=true, unit="rad/s") "velocity der(phi2)";
  Real der_x(start=0.01, fixed=true, unit="m/s") "velocity der(x)";
  Real der_i_integral(start=0.0, fixed=true, unit="A.s/s") "velocity der(i_integral)";
  Real lambda[1](each unit="N") "constraint multipliers: generalized constraint forces A^T*lambda";
  output Real ratio(unit="1") "output ratio";
  output Real power(unit="W") "electrical power drawn by the motor";
  output Real i(unit="A") "armature current";
  Real residual[1](each unit="m.rad/s") "constraint residuals at velocity level (holonomic ones differentiated); stay near 0";
  Real tau(unit="N.m") "effort: motor torque";
  Real eb(unit="V") "effort: back-emf";
protected
  Real nhb_cse1(unit="m") "common subexpression";
  Real nhb_cse2(unit="m2") "common subexpression";
  Real nhb_cse3(unit="m2") "common subexpression";
  Real nhb_cse4(unit="kg") "common subexpression";
  Real nhb_cse5(unit="kg.m2") "common subexpression";
  Real nhb_cse6(unit="s2.A2/(kg.m2)") "common subexpression";
equation
  // kinematics
  der(phi1) = der_phi1;
  der(phi2) = der_phi2;
  der(x) = der_x;
  der(i_integral) = der_i_integral;
  // common subexpressions
  nhb_cse1 = c - x;
  nhb_cse2 = l^2;
  nhb_cse3 = 4*nhb_cse2 - x^2;
  nhb_cse4 = (0.5)*mb;
  nhb_cse5 = 2*mb*nhb_cse2;
  nhb_cse6 = 1.0/La;
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  I1*der(der_phi1) + lambda[1]*nhb_cse1 - tau = 0;
  Rd*lambda[1] + der(der_phi2)*(I2 + I3*Rd^2/a^2 + nhb_cse3*nhb_cse4) = -Mr - cr*der_phi2 + der_phi2*der_x*mb*x;
  der(der_x)*(m3 + ms + nhb_cse5/nhb_cse3) = -der_phi2^2*nhb_cse4*x - der_x^2*nhb_cse5*x/nhb_cse3^2 - 2*((0.5)*k2 + (0.5)*k3)*(x - x0);
  der(der_i_integral) + eb*nhb_cse6 = nhb_cse6*(-Ra*der_i_integral + U);
  // constraints at acceleration level (index 1)
  // constraints.nonholonomic[1]
  -Rd*der(der_phi2) - der(der_phi1)*nhb_cse1 = -der_phi1*der_x;
  // effort constraints Gamma(q, der(q), e, s, t) = 0, kept algebraic (solved with the accelerations)
  // efforts.tau
  -der_i_integral*kt + tau = 0;
  // efforts.eb
  -der_phi1*ke + eb = 0;
  // constraint residuals (velocity level)
  residual[1] = -Rd*der_phi2 + der_phi1*(-c + x);
  // outputs
  ratio = der(phi2)/der(phi1);
  power = U*der(i_integral);
  i = der(i_integral);
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=2.0, Interval=0.002, Tolerance=1e-08),
    Documentation(info="<html>
<p>The constant speed drive of examples/constant_speed_drive.toml driven by a separately excited DC motor instead of a torque-speed characteristic (seed Section 1.2.5: a DC motor is a regulated effort source). The armature current i is a dynamic variable, L*der(i) = U - R*i - eb; the motor torque tau and the back-emf eb are effort variables kept as algebraic effort constraints tau - kt*i = 0 and eb - ke*der(phi1) = 0 (Gamma(q, f, e, s, t) = 0 of the seed's eq. 4.4). Rolling constraint (x - c)*der(phi1) = R*der(phi2).</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Inputs: U.</p>
<p>Export form (chosen automatically): implicit: multiplier DAE with the constraints at acceleration level (index 1), accelerations implicit in M [der(v), lambda] = F: Rumoca 0.9 takes single-acceleration rows as derivative rows, so no structure of docs/compiler-defects is present; no index reduction needed.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.5)*I1*der(phi1)^2 + der(phi2)^2*((0.5)*I2 + (0.5)*I3*Rd^2/a^2 + (0.25)*mb*(4*l^2 - x^2)) + der(x)^2*(l^2*mb/(4*l^2 - x^2) + (0.5)*m3 + (0.5)*ms)</code></li>
<li>V = <code>((0.5)*k2 + (0.5)*k3)*(x - x0)^2</code></li>
<li>Q<sub>phi1</sub> = <code>tau</code></li>
<li>Q<sub>phi2</sub> = <code>-Mr - cr*der(phi2)</code></li>
<li>constraints.nonholonomic[1]: <code>-Rd*der(phi2) + der(phi1)*(-c + x)</code> = 0</li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q + A^T*lambda</code> with the multipliers <code>lambda</code>, the constraints differentiated to acceleration level (index 1); <code>A</code> is the Jacobian of the velocity-level constraints <code>A*der(q) + a0 = 0</code>.</p>
</html>"));
end DcMotorDrive;
