within NonholonomicExamples;
model CartesianPendulum "Simple pendulum in Cartesian coordinates of the bob, the rod kept as the holonomic displacement constraint x^2 + y^2 - l^2 = 0 (Lagrange's equation with displacement constraints, Section 4.2 of the constrained-systems seed): T = m/2*(der(x)^2 + der(y)^2), V = m*g*y, pivot at the origin, y up. Same m, g, l and start as SimplePendulum (theta0 = 0.5 rad, der(theta)0 = 0.3 rad/s): x = l*sin(theta0), y = -l*cos(theta0), der(x) = l*cos(theta0)*der(theta)0, der(y) = l*sin(theta0)*der(theta)0, so theta = atan2(x, -y) can be compared with SimplePendulum.theta."
  // parameters
  parameter Real m(unit="kg") = 0.5 "mass of the bob";
  parameter Real l(unit="m") = 0.8 "length of the rod";
  parameter Real g(unit="m/s2") = 9.81 "gravitational acceleration";
  // generalized coordinates
  Real x(start=0.3835404308833624, fixed=true, unit="m") "horizontal position of the bob";
  Real y(start=-0.7020660495122982, fixed=true, unit="m") "vertical position of the bob (up positive)";
  // generalized velocities
  Real der_x(start=0.21061981485368947, fixed=true, unit="m/s") "velocity der(x)";
  Real der_y(start=0.11506212926500872, fixed=true, unit="m/s") "velocity der(y)";
  Real lambda[1](each unit="N/m") "constraint multipliers: generalized constraint forces A^T*lambda";
  output Real theta(unit="rad") "output theta";
  output Real energy(unit="N.m") "output energy";
  Real residual[1](each unit="m2/s") "constraint residuals at velocity level (holonomic ones differentiated); stay near 0";
protected
  Real nhb_cse1(unit="m") "common subexpression";
  Real nhb_cse2(unit="m") "common subexpression";
equation
  // kinematics
  der(x) = der_x;
  der(y) = der_y;
  // common subexpressions
  nhb_cse1 = 2*x;
  nhb_cse2 = 2*y;
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  der(der_x)*m - lambda[1]*nhb_cse1 = 0;
  der(der_y)*m - lambda[1]*nhb_cse2 = -g*m;
  // constraints at acceleration level (index 1)
  // constraints.holonomic[1]
  der(der_x)*nhb_cse1 + der(der_y)*nhb_cse2 = -2*der_x^2 - 2*der_y^2;
  // constraint residuals (velocity level)
  residual[1] = 2*der_x*x + 2*der_y*y;
  // outputs
  theta = atan2(x, -y);
  energy = g*m*(l + y) + (0.5)*m*(der(x)^2 + der(y)^2);
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=10.0, Interval=0.01, Tolerance=1e-08),
    Documentation(info="<html>
<p>Simple pendulum in Cartesian coordinates of the bob, the rod kept as the holonomic displacement constraint x^2 + y^2 - l^2 = 0 (Lagrange's equation with displacement constraints, Section 4.2 of the constrained-systems seed): T = m/2*(der(x)^2 + der(y)^2), V = m*g*y, pivot at the origin, y up. Same m, g, l and start as SimplePendulum (theta0 = 0.5 rad, der(theta)0 = 0.3 rad/s): x = l*sin(theta0), y = -l*cos(theta0), der(x) = l*cos(theta0)*der(theta)0, der(y) = l*sin(theta0)*der(theta)0, so theta = atan2(x, -y) can be compared with SimplePendulum.theta.</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Export form (chosen automatically): implicit: multiplier DAE with the constraints at acceleration level (index 1), accelerations implicit in M [der(v), lambda] = F: Rumoca 0.9 takes single-acceleration rows as derivative rows, so no structure of docs/compiler-defects is present; no index reduction needed.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.5)*m*(der(x)^2 + der(y)^2)</code></li>
<li>V = <code>g*m*y</code></li>
<li>constraints.holonomic[1]: <code>-l^2 + x^2 + y^2</code> = 0</li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q + A^T*lambda</code> with the multipliers <code>lambda</code>, the constraints differentiated to acceleration level (index 1); <code>A</code> is the Jacobian of the velocity-level constraints <code>A*der(q) + a0 = 0</code>.</p>
</html>"));
end CartesianPendulum;
