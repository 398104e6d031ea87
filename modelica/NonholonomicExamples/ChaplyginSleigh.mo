within NonholonomicExamples;
model ChaplyginSleigh "Rigid body on a plane with a knife edge behind its centre of mass"
  // parameters
  parameter Real m(unit="kg") = 1.5 "mass";
  parameter Real J(unit="kg.m2") = 0.12 "moment of inertia about the centre of mass";
  parameter Real a(unit="m") = 0.2 "knife edge distance behind the centre of mass";
  // generalized coordinates
  Real x(start=0.0, fixed=true, unit="m") "centre of mass, x";
  Real y(start=0.0, fixed=true, unit="m") "centre of mass, y";
  Real theta(start=0.0, fixed=true, unit="rad") "heading: angle of the body axis (knife edge direction) to the x axis";
  // generalized velocities
  Real der_x(start=0.3, fixed=true, unit="m/s") "velocity der(x)";
  Real der_y(start=0.16, fixed=true, unit="m/s") "velocity der(y)";
  Real der_theta(start=0.8, fixed=true, unit="rad/s") "velocity der(theta)";
  Real lambda[1](each unit="N") "constraint multipliers: generalized constraint forces A^T*lambda";
  Real residual[1](each unit="m/s") "constraint residuals at velocity level (holonomic ones differentiated); stay near 0";
protected
  Real nhb_cse1(unit="1") "common subexpression";
  Real nhb_cse2(unit="1") "common subexpression";
equation
  // kinematics
  der(x) = der_x;
  der(y) = der_y;
  der(theta) = der_theta;
  // common subexpressions
  nhb_cse1 = sin(theta);
  nhb_cse2 = cos(theta);
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  der(der_x)*m + lambda[1]*nhb_cse1 = 0;
  der(der_y)*m - lambda[1]*nhb_cse2 = 0;
  J*der(der_theta) + a*lambda[1] = 0;
  // constraints at acceleration level (index 1)
  // constraints.nonholonomic[1]
  -a*der(der_theta) - der(der_x)*nhb_cse1 + der(der_y)*nhb_cse2 = -der_theta*(-der_x*nhb_cse2 - der_y*nhb_cse1);
  // constraint residuals (velocity level)
  residual[1] = -a*der_theta - der_x*sin(theta) + der_y*cos(theta);
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=20.0, Interval=0.02, Tolerance=1e-08),
    Documentation(info="<html>
<p>Rigid body on a plane with a knife edge behind its centre of mass</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Export form (chosen automatically): implicit: multiplier DAE with the constraints at acceleration level (index 1), accelerations implicit in M [der(v), lambda] = F: Rumoca 0.9 takes single-acceleration rows as derivative rows, so no structure of docs/compiler-defects is present; no index reduction needed.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.5)*J*der(theta)^2 + (0.5)*m*(der(x)^2 + der(y)^2)</code></li>
<li>constraints.nonholonomic[1]: <code>-a*der(theta) - der(x)*sin(theta) + der(y)*cos(theta)</code> = 0</li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q + A^T*lambda</code> with the multipliers <code>lambda</code>, the constraints differentiated to acceleration level (index 1); <code>A</code> is the Jacobian of the velocity-level constraints <code>A*der(q) + a0 = 0</code>.</p>
</html>"));
end ChaplyginSleigh;
