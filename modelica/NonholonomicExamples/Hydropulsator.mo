within NonholonomicExamples;
model Hydropulsator "Rotary hydropulsator (case study 4.4.5.2, eqs. 4.350-4.373): a rotor (angle phi) delivers the fluid volume c*der(phi) per unit time; a rotating disposer (angle psi) lets the fraction (1 + cos(2*psi))/2 of it into the cylinder (piston area A) of the platform x2, which carries the test object x1 on a spring k. Nonholonomic constraint der(x2) = c/(2*A)*(1 + cos(2*psi))*der(phi) = c/A*cos(psi)^2*der(phi) (4.356). The rotor and the disposer are driven by independent motors (inputs Mr, Md) against viscous resisting torques hr*der(phi), hd*der(psi). Note: as modelled in the seed the inflow (1 + cos(2*psi)) never changes sign, so for der(phi) > 0 the platform advances in strokes (a ripple of about 3 mm at twice the disposer speed on top of a mean drift) while the object oscillates relative to the platform."
  // parameters
  parameter Real m1(unit="kg") = 10.0 "mass of the test object";
  parameter Real m2(unit="kg") = 5.0 "mass of the platform with the piston";
  parameter Real Ir(unit="kg.m2") = 0.01 "moment of inertia of the rotor";
  parameter Real Id(unit="kg.m2") = 0.01 "moment of inertia of the disposer";
  parameter Real k(unit="N/m") = 8000.0 "stiffness between the object and the platform";
  parameter Real c(unit="m3/rad") = 6e-06 "volume delivered by the rotor per radian";
  parameter Real A(unit="m2") = 0.001 "cross-section area of the platform cylinder";
  parameter Real hr(unit="N.m.s/rad") = 0.1 "viscous resistance coefficient of the rotor";
  parameter Real hd(unit="N.m.s/rad") = 0.1 "viscous resistance coefficient of the disposer";
  // inputs
  input Real Mr(start=2.0, unit="N.m") "driving torque of the rotor motor";
  input Real Md(start=1.0, unit="N.m") "driving torque of the disposer motor";
  // generalized coordinates
  Real x1(start=0.0, fixed=true, unit="m") "displacement of the test object";
  Real x2(start=0.0, fixed=true, unit="m") "displacement of the platform (piston)";
  Real phi(start=0.0, fixed=true, unit="rad") "rotation angle of the rotor";
  Real psi(start=0.0, fixed=true, unit="rad") "rotation angle of the disposer";
  // generalized velocities
  Real der_x1(start=0.12, fixed=true, unit="m/s") "velocity der(x1)";
  Real der_x2(start=0.12, fixed=true, unit="m/s") "velocity der(x2)";
  Real der_phi(start=20.0, fixed=true, unit="rad/s") "velocity der(phi)";
  Real der_psi(start=10.0, fixed=true, unit="rad/s") "velocity der(psi)";
  Real lambda[1](each unit="N") "constraint multipliers: generalized constraint forces A^T*lambda";
  output Real relative_displacement(unit="m") "displacement of the object relative to the platform";
  output Real platform_speed(unit="m/s") "inflow per piston area, eq. (4.356)";
  Real residual[1](each unit="m/s") "constraint residuals at velocity level (holonomic ones differentiated); stay near 0";
protected
  Real nhb_cse1(unit="1") "common subexpression";
  Real nhb_cse2(unit="m") "common subexpression";
  Real nhb_cse3(unit="m") "common subexpression";
  Real nhb_cse4(unit="N") "common subexpression";
equation
  // kinematics
  der(x1) = der_x1;
  der(x2) = der_x2;
  der(phi) = der_phi;
  der(psi) = der_psi;
  // common subexpressions
  nhb_cse1 = 2*psi;
  nhb_cse2 = c/A;
  nhb_cse3 = (0.5)*nhb_cse2*(cos(nhb_cse1) + 1);
  nhb_cse4 = k*(x1 - x2);
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  der(der_x1)*m1 = -nhb_cse4;
  der(der_x2)*m2 - lambda[1] = nhb_cse4;
  Ir*der(der_phi) + lambda[1]*nhb_cse3 = Mr - der_phi*hr;
  Id*der(der_psi) = Md - der_psi*hd;
  // constraints at acceleration level (index 1)
  // constraints.nonholonomic[1]
  -der(der_phi)*nhb_cse3 + der(der_x2) = -der_phi*der_psi*nhb_cse2*sin(nhb_cse1);
  // constraint residuals (velocity level)
  residual[1] = der_x2 - (0.5)*c*der_phi*(cos(2*psi) + 1)/A;
  // outputs
  relative_displacement = x1 - x2;
  platform_speed = (0.5)*c*der(phi)*(cos(2*psi) + 1)/A;
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=5.0, Interval=0.005, Tolerance=1e-08),
    Documentation(info="<html>
<p>Rotary hydropulsator (case study 4.4.5.2, eqs. 4.350-4.373): a rotor (angle phi) delivers the fluid volume c*der(phi) per unit time; a rotating disposer (angle psi) lets the fraction (1 + cos(2*psi))/2 of it into the cylinder (piston area A) of the platform x2, which carries the test object x1 on a spring k. Nonholonomic constraint der(x2) = c/(2*A)*(1 + cos(2*psi))*der(phi) = c/A*cos(psi)^2*der(phi) (4.356). The rotor and the disposer are driven by independent motors (inputs Mr, Md) against viscous resisting torques hr*der(phi), hd*der(psi). Note: as modelled in the seed the inflow (1 + cos(2*psi)) never changes sign, so for der(phi) &gt; 0 the platform advances in strokes (a ripple of about 3 mm at twice the disposer speed on top of a mean drift) while the object oscillates relative to the platform.</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Inputs: Mr, Md.</p>
<p>Export form (chosen automatically): implicit: multiplier DAE with the constraints at acceleration level (index 1), accelerations implicit in M [der(v), lambda] = F: Rumoca 0.9 takes single-acceleration rows as derivative rows, so no structure of docs/compiler-defects is present; no index reduction needed.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.5)*Id*der(psi)^2 + (0.5)*Ir*der(phi)^2 + (0.5)*der(x1)^2*m1 + (0.5)*der(x2)^2*m2</code></li>
<li>V = <code>(0.5)*k*(x1 - x2)^2</code></li>
<li>Q<sub>phi</sub> = <code>Mr - der(phi)*hr</code></li>
<li>Q<sub>psi</sub> = <code>Md - der(psi)*hd</code></li>
<li>constraints.nonholonomic[1]: <code>der(x2) - (0.5)*c*der(phi)*(cos(2*psi) + 1)/A</code> = 0</li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q + A^T*lambda</code> with the multipliers <code>lambda</code>, the constraints differentiated to acceleration level (index 1); <code>A</code> is the Jacobian of the velocity-level constraints <code>A*der(q) + a0 = 0</code>.</p>
</html>"));
end Hydropulsator;
