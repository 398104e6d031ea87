within NonholonomicExamples;
model InclinedSkate "Skate (knife edge) on a plane inclined at angle alpha, x down the line of steepest slope, y horizontal; the blade points along (cos(theta), sin(theta)) and cannot slide sideways: sin(theta)*der(x) - cos(theta)*der(y) = 0. The blade is turned at the constant rate w (holonomic, time-dependent constraint theta - w*t = 0). Starting from rest at the origin with the blade pointing down the slope (theta = 0), the speed along the blade obeys der(v) = g*sin(alpha)*cos(w*t), so v = g*sin(alpha)/w*sin(w*t) and the exact solution is x = g*sin(alpha)/(2*w^2)*sin(w*t)^2, y = g*sin(alpha)/(2*w)*(t - sin(2*w*t)/(2*w)) (a cycloid-like path drifting sideways); outputs x_exact and y_exact."
  // parameters
  parameter Real m(unit="kg") = 1.0 "mass of the skate";
  parameter Real J(unit="kg.m2") = 0.01 "moment of inertia about the vertical axis through the contact point";
  parameter Real g(unit="m/s2") = 9.81 "gravitational acceleration";
  parameter Real alpha(unit="rad") = 0.3 "inclination angle of the plane";
  parameter Real w(unit="rad/s") = 1.0 "prescribed turning rate of the blade";
  // generalized coordinates
  Real x(start=0.0, fixed=true, unit="m") "position of the contact point down the slope";
  Real y(start=0.0, fixed=true, unit="m") "horizontal position of the contact point across the slope";
  Real theta(start=0.0, fixed=true, unit="rad") "blade direction measured from the downhill x axis (der(theta) = w)";
  // generalized velocities
  Real der_x(start=0.0, fixed=true, unit="m/s") "velocity der(x)";
  Real der_y(start=0.0, fixed=true, unit="m/s") "velocity der(y)";
  Real der_theta(start=1.0, fixed=true, unit="rad/s") "velocity der(theta)";
  Real lambda[2](unit={"N.m", "N"}) "constraint multipliers: generalized constraint forces A^T*lambda";
  output Real x_exact(unit="m/rad2") "output x_exact";
  output Real y_exact(unit="m") "output y_exact";
  Real residual[2](unit={"rad/s", "m/s"}) "constraint residuals at velocity level (holonomic ones differentiated); stay near 0";
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
  der(der_x)*m - lambda[2]*nhb_cse1 = g*m*sin(alpha);
  der(der_y)*m + lambda[2]*nhb_cse2 = 0;
  J*der(der_theta) - lambda[1] = 0;
  // constraints at acceleration level (index 1)
  // constraints.holonomic[1]
  der(der_theta) = 0;
  // constraints.nonholonomic[1]
  der(der_x)*nhb_cse1 - der(der_y)*nhb_cse2 = -der_theta*(der_x*nhb_cse2 + der_y*nhb_cse1);
  // constraint residuals (velocity level)
  residual[1] = der(theta) - w;
  residual[2] = der_x*sin(theta) - der_y*cos(theta);
  // outputs
  x_exact = (0.5)*g*sin(alpha)*sin(time*w)^2/w^2;
  y_exact = (0.5)*g*(time - (0.5)*sin(2*time*w)/w)*sin(alpha)/w;
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=10.0, Interval=0.01, Tolerance=1e-08),
    Documentation(info="<html>
<p>Skate (knife edge) on a plane inclined at angle alpha, x down the line of steepest slope, y horizontal; the blade points along (cos(theta), sin(theta)) and cannot slide sideways: sin(theta)*der(x) - cos(theta)*der(y) = 0. The blade is turned at the constant rate w (holonomic, time-dependent constraint theta - w*t = 0). Starting from rest at the origin with the blade pointing down the slope (theta = 0), the speed along the blade obeys der(v) = g*sin(alpha)*cos(w*t), so v = g*sin(alpha)/w*sin(w*t) and the exact solution is x = g*sin(alpha)/(2*w^2)*sin(w*t)^2, y = g*sin(alpha)/(2*w)*(t - sin(2*w*t)/(2*w)) (a cycloid-like path drifting sideways); outputs x_exact and y_exact.</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Export form (chosen automatically): implicit: multiplier DAE with the constraints at acceleration level (index 1), accelerations implicit in M [der(v), lambda] = F: Rumoca 0.9 takes single-acceleration rows as derivative rows, so no structure of docs/compiler-defects is present; no index reduction needed.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.5)*J*der(theta)^2 + (0.5)*m*(der(x)^2 + der(y)^2)</code></li>
<li>V = <code>-g*m*x*sin(alpha)</code></li>
<li>constraints.holonomic[1]: <code>-time*w + theta</code> = 0</li>
<li>constraints.nonholonomic[1]: <code>der(x)*sin(theta) - der(y)*cos(theta)</code> = 0</li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q + A^T*lambda</code> with the multipliers <code>lambda</code>, the constraints differentiated to acceleration level (index 1); <code>A</code> is the Jacobian of the velocity-level constraints <code>A*der(q) + a0 = 0</code>.</p>
</html>"));
end InclinedSkate;
