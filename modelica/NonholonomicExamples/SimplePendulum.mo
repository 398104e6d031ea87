within NonholonomicExamples;
model SimplePendulum "Simple pendulum (Huston, Dynamics of Mechanical Systems, Example 12.3.1): a particle of mass m on a massless rod of length l, angle theta from the downward vertical. K = 1/2*m*l^2*der(theta)^2 (12.3.7), P = m*g*l*(1 - cos(theta)); Lagrange: m*l^2*der(der(theta)) + m*g*l*sin(theta) = 0. Same m, g, l and start as CartesianPendulum."
  // parameters
  parameter Real m(unit="kg") = 0.5 "mass of the bob";
  parameter Real l(unit="m") = 0.8 "length of the rod";
  parameter Real g(unit="m/s2") = 9.81 "gravitational acceleration";
  // generalized coordinates
  Real theta(start=0.5, fixed=true, unit="rad") "angle of the rod from the downward vertical";
  // generalized velocities
  Real der_theta(start=0.3, fixed=true, unit="rad/s") "velocity der(theta)";
  output Real energy(unit="J") "total energy (conserved)";
equation
  // kinematics
  der(theta) = der_theta;
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  der(der_theta)*l^2*m = -g*l*m*sin(theta);
  // outputs
  energy = (0.5)*der(theta)^2*l^2*m + g*l*m*(1 - cos(theta));
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=10.0, Interval=0.01, Tolerance=1e-08),
    Documentation(info="<html>
<p>Simple pendulum (Huston, Dynamics of Mechanical Systems, Example 12.3.1): a particle of mass m on a massless rod of length l, angle theta from the downward vertical. K = 1/2*m*l^2*der(theta)^2 (12.3.7), P = m*g*l*(1 - cos(theta)); Lagrange: m*l^2*der(der(theta)) + m*g*l*sin(theta) = 0. Same m, g, l and start as CartesianPendulum.</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Export form (chosen automatically): implicit: ODE with the accelerations implicit in M der(v) = F: no multiplier and no coupled split block, so no structure of docs/compiler-defects is present.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.5)*der(theta)^2*l^2*m</code></li>
<li>V = <code>g*l*m*(1 - cos(theta))</code></li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q</code> (mass matrix implicit: <code>M*der(der(q)) = F</code>, solved by the tool).</p>
</html>"));
end SimplePendulum;
