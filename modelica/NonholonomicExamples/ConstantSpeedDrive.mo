within NonholonomicExamples;
model ConstantSpeedDrive "Novoselov's constant speed drive (Gutowski-type case study 4.4.5.1, eqs. 4.304-4.348): a driving shaft 1 with a horizontal disc drives, through a thin pulley (radius a) on an intermediate shaft 3 rolling on the disc at radius x - c, a drum of radius R on the driven shaft 2. A centrifugal governor on shaft 2 (two balls of mass mb on rods of length l, sleeve position x = 2*l*cos(vartheta)) shifts the pulley against springs k2, k3. Nonholonomic rolling constraint (x - c)*der(phi1) = R*der(phi2) (4.305). Here c < 0 so that the rolling radius x - c stays positive for |x| < 2*l and the governor feedback is stabilising: a faster shaft 2 pulls x (and the radius x - c) down, which slows shaft 2."
  // parameters
  parameter Real I1(unit="kg.m2") = 0.05 "moment of inertia of the disc with shaft 1";
  parameter Real I2(unit="kg.m2") = 0.01 "moment of inertia of the drum with shaft 2";
  parameter Real I3(unit="kg.m2") = 0.0001 "moment of inertia of the pulley about shaft 3";
  parameter Real m3(unit="kg") = 0.3 "mass of the pulley with shaft 3";
  parameter Real ms(unit="kg") = 0.1 "mass of the governor sleeve";
  parameter Real mb(unit="kg") = 0.2 "mass of one governor ball";
  parameter Real l(unit="m") = 0.1 "length of a governor rod";
  parameter Real R(unit="m") = 0.05 "radius of the drum on shaft 2";
  parameter Real a(unit="m") = 0.03 "radius of the pulley on shaft 3";
  parameter Real c(unit="m") = -0.25 "cable-geometry constant: the pulley rolls on the disc at radius x - c";
  parameter Real k2(unit="N/m") = 1500.0 "stiffness of the governor spring";
  parameter Real k3(unit="N/m") = 500.0 "stiffness of the pulley spring";
  parameter Real x0(unit="m") = 0.1 "sleeve position at which the springs are relaxed";
  parameter Real M0(unit="N.m") = 5.0 "motor stall torque";
  parameter Real w0(unit="rad/s") = 30.0 "motor no-load speed";
  parameter Real Mr(unit="N.m") = 0.2 "constant resisting torque of the driven machine";
  parameter Real cr(unit="N.m.s/rad") = 0.005 "viscous resisting torque coefficient of the driven machine";
  // generalized coordinates
  Real phi1(start=0.0, fixed=true, unit="rad") "rotation angle of the driving shaft 1 (motor side)";
  Real phi2(start=0.0, fixed=true, unit="rad") "rotation angle of the driven shaft 2 (machine side)";
  Real x(start=0.1, fixed=true, unit="m", nominal=0.001) "translation of the governor sleeve and of the pulley on shaft 3";
  // generalized velocities
  Real der_phi1(start=5.0, fixed=true, unit="rad/s") "velocity der(phi1)";
  Real der_phi2(start=34.99999999999999, fixed=true, unit="rad/s") "velocity der(phi2)";
  Real der_x(start=0.01, fixed=true, unit="m/s") "velocity der(x)";
  Real lambda[1](each unit="N") "constraint multipliers: generalized constraint forces A^T*lambda";
  output Real ratio(unit="1") "output ratio";
  output Real vartheta(unit="rad") "output vartheta";
  Real residual[1](each unit="m.rad/s") "constraint residuals at velocity level (holonomic ones differentiated); stay near 0";
protected
  Real nhb_cse1(unit="m") "common subexpression";
  Real nhb_cse2(unit="m2") "common subexpression";
  Real nhb_cse3(unit="m2") "common subexpression";
  Real nhb_cse4(unit="kg") "common subexpression";
  Real nhb_cse5(unit="kg.m2") "common subexpression";
equation
  // kinematics
  der(phi1) = der_phi1;
  der(phi2) = der_phi2;
  der(x) = der_x;
  // common subexpressions
  nhb_cse1 = c - x;
  nhb_cse2 = l^2;
  nhb_cse3 = 4*nhb_cse2 - x^2;
  nhb_cse4 = (0.5)*mb;
  nhb_cse5 = 2*mb*nhb_cse2;
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  I1*der(der_phi1) + lambda[1]*nhb_cse1 = M0*(-der_phi1/w0 + 1);
  R*lambda[1] + der(der_phi2)*(I2 + I3*R^2/a^2 + nhb_cse3*nhb_cse4) = -Mr - cr*der_phi2 + der_phi2*der_x*mb*x;
  der(der_x)*(m3 + ms + nhb_cse5/nhb_cse3) = -der_phi2^2*nhb_cse4*x - der_x^2*nhb_cse5*x/nhb_cse3^2 - 2*((0.5)*k2 + (0.5)*k3)*(x - x0);
  // constraints at acceleration level (index 1)
  // constraints.nonholonomic[1]
  -R*der(der_phi2) - der(der_phi1)*nhb_cse1 = -der_phi1*der_x;
  // constraint residuals (velocity level)
  residual[1] = -R*der_phi2 + der_phi1*(-c + x);
  // outputs
  ratio = der(phi2)/der(phi1);
  vartheta = acos((0.5)*x/l);
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=5.0, Interval=0.005, Tolerance=1e-08),
    Documentation(info="<html>
<p>Novoselov's constant speed drive (Gutowski-type case study 4.4.5.1, eqs. 4.304-4.348): a driving shaft 1 with a horizontal disc drives, through a thin pulley (radius a) on an intermediate shaft 3 rolling on the disc at radius x - c, a drum of radius R on the driven shaft 2. A centrifugal governor on shaft 2 (two balls of mass mb on rods of length l, sleeve position x = 2*l*cos(vartheta)) shifts the pulley against springs k2, k3. Nonholonomic rolling constraint (x - c)*der(phi1) = R*der(phi2) (4.305). Here c &lt; 0 so that the rolling radius x - c stays positive for |x| &lt; 2*l and the governor feedback is stabilising: a faster shaft 2 pulls x (and the radius x - c) down, which slows shaft 2.</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Export form (chosen automatically): implicit: multiplier DAE with the constraints at acceleration level (index 1), accelerations implicit in M [der(v), lambda] = F: Rumoca 0.9 takes single-acceleration rows as derivative rows, so no structure of docs/compiler-defects is present; no index reduction needed.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.5)*I1*der(phi1)^2 + der(phi2)^2*((0.5)*I2 + (0.5)*I3*R^2/a^2 + (0.25)*mb*(4*l^2 - x^2)) + der(x)^2*(l^2*mb/(4*l^2 - x^2) + (0.5)*m3 + (0.5)*ms)</code></li>
<li>V = <code>((0.5)*k2 + (0.5)*k3)*(x - x0)^2</code></li>
<li>Q<sub>phi1</sub> = <code>M0*(-der(phi1)/w0 + 1)</code></li>
<li>Q<sub>phi2</sub> = <code>-Mr - cr*der(phi2)</code></li>
<li>constraints.nonholonomic[1]: <code>-R*der(phi2) + der(phi1)*(-c + x)</code> = 0</li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q + A^T*lambda</code> with the multipliers <code>lambda</code>, the constraints differentiated to acceleration level (index 1); <code>A</code> is the Jacobian of the velocity-level constraints <code>A*der(q) + a0 = 0</code>.</p>
</html>"));
end ConstantSpeedDrive;
