within NonholonomicExamples;
model SteeredCar "Car (bicycle model) in a horizontal plane with a prescribed steering angle (Do Sanh, 'A form of equation of motion for Chaplyghin's systems', Example 2; Dobronravov 1970, pp. 22-31). (x, y) is the centre of mass, phi the heading; the rear and front wheels do not slip sideways (two nonholonomic constraints, 1 degree of freedom). A traction force F acts along the car axis; a linear drag c_d on the centre-of-mass velocity keeps the speed bounded. Without drag the reduced equation is [J + m*(l^2*cot(steer)^2 + b^2)]*der(der(phi)) = F*l*cot(steer) + m*l^2*cot(steer)*der(steer)/sin(steer)^2*der(phi) (corrected (3.30))."
  // parameters
  parameter Real m(unit="kg") = 10.0 "mass of the car";
  parameter Real J(unit="kg.m2") = 0.8 "moment of inertia about the vertical axis through the centre of mass";
  parameter Real a(unit="m") = 0.3 "distance from the centre of mass to the front axle";
  parameter Real b(unit="m") = 0.4 "distance from the centre of mass to the rear axle";
  parameter Real c_d(unit="N.s/m") = 10.0 "linear drag coefficient on the centre-of-mass velocity";
  parameter Real steer0(unit="rad") = 0.35 "mean steering angle";
  parameter Real steer1(unit="rad") = 0.15 "amplitude of the steering angle oscillation";
  parameter Real steer_w(unit="rad/s") = 0.5 "angular frequency of the steering angle oscillation";
  // inputs
  input Real F(start=50.0, unit="N") "traction force along the car axis";
  // generalized coordinates
  Real x(start=0.0, fixed=true, unit="m") "centre of mass, x";
  Real y(start=0.0, fixed=true, unit="m") "centre of mass, y";
  Real phi(start=0.0, fixed=true, unit="rad") "heading: angle between the car axis and the x axis";
  // generalized velocities
  Real der_x(start=0.9588292556793241, fixed=true, unit="m/s") "velocity der(x)";
  Real der_y(start=0.2, fixed=true, unit="m/s") "velocity der(y)";
  Real der_phi(start=0.5, fixed=true, unit="rad/s") "velocity der(phi)";
  Real lambda[2](each unit="N") "constraint multipliers: generalized constraint forces A^T*lambda";
  output Real speed(unit="m/s") "output speed";
  output Real steering_angle(unit="rad") "output steering_angle";
  output Real kinetic_energy(unit="N.m") "output kinetic_energy";
  Real residual[2](each unit="m/s") "constraint residuals at velocity level (holonomic ones differentiated); stay near 0";
protected
  Real nhb_cse1(unit="1") "common subexpression";
  Real nhb_cse2(unit="1") "common subexpression";
  Real nhb_cse3(unit="1") "common subexpression";
  Real nhb_cse4(unit="1") "common subexpression";
  Real nhb_cse5(unit="1") "common subexpression";
  Real nhb_cse6(unit="1") "common subexpression";
  Real nhb_cse7(unit="1") "common subexpression";
  Real nhb_cse8(unit="m") "common subexpression";
  Real nhb_cse9(unit="m/s") "common subexpression";
  Real nhb_cse10(unit="1/s") "common subexpression";
  Real nhb_cse11(unit="m/s") "common subexpression";
equation
  // kinematics
  der(x) = der_x;
  der(y) = der_y;
  der(phi) = der_phi;
  // common subexpressions
  nhb_cse1 = sin(phi);
  nhb_cse2 = steer_w*time;
  nhb_cse3 = steer0 + steer1*sin(nhb_cse2);
  nhb_cse4 = nhb_cse3 + phi;
  nhb_cse5 = sin(nhb_cse4);
  nhb_cse6 = cos(phi);
  nhb_cse7 = cos(nhb_cse4);
  nhb_cse8 = a*cos(nhb_cse3);
  nhb_cse9 = der_x*nhb_cse7;
  nhb_cse10 = steer1*steer_w*cos(nhb_cse2);
  nhb_cse11 = der_y*nhb_cse5;
  // dynamics: Lagrange's equations with multipliers (mass matrix * accelerations = forcing)
  der(der_x)*m - lambda[1]*nhb_cse1 - lambda[2]*nhb_cse5 = F*nhb_cse6 - c_d*der_x;
  der(der_y)*m + lambda[1]*nhb_cse6 + lambda[2]*nhb_cse7 = F*nhb_cse1 - c_d*der_y;
  J*der(der_phi) - b*lambda[1] + lambda[2]*nhb_cse8 = 0;
  // constraints at acceleration level (index 1)
  // constraints.nonholonomic[1]
  b*der(der_phi) + der(der_x)*nhb_cse1 - der(der_y)*nhb_cse6 = -der_phi*(der_x*nhb_cse6 + der_y*nhb_cse1);
  // constraints.nonholonomic[2]
  -der(der_phi)*nhb_cse8 + der(der_x)*nhb_cse5 - der(der_y)*nhb_cse7 = -a*der_phi*nhb_cse10*sin(nhb_cse3) - der_phi*(nhb_cse11 + nhb_cse9) - nhb_cse10*nhb_cse11 - nhb_cse10*nhb_cse9;
  // constraint residuals (velocity level)
  residual[1] = b*der_phi + der_x*sin(phi) - der_y*cos(phi);
  residual[2] = -a*der_phi*cos(steer0 + steer1*sin(steer_w*time)) + der_x*sin(phi + steer0 + steer1*sin(steer_w*time)) - der_y*cos(phi + steer0 + steer1*sin(steer_w*time));
  // outputs
  speed = der(x)*cos(phi) + der(y)*sin(phi);
  steering_angle = steer0 + steer1*sin(steer_w*time);
  kinetic_energy = (0.5)*J*der(phi)^2 + (0.5)*m*(der(x)^2 + der(y)^2);
  annotation(
    Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", lineColor={0,0,255})}),
    experiment(StopTime=10.0, Interval=0.01, Tolerance=1e-08),
    Documentation(info="<html>
<p>Car (bicycle model) in a horizontal plane with a prescribed steering angle (Do Sanh, 'A form of equation of motion for Chaplyghin's systems', Example 2; Dobronravov 1970, pp. 22-31). (x, y) is the centre of mass, phi the heading; the rear and front wheels do not slip sideways (two nonholonomic constraints, 1 degree of freedom). A traction force F acts along the car axis; a linear drag c_d on the centre-of-mass velocity keeps the speed bounded. Without drag the reduced equation is [J + m*(l^2*cot(steer)^2 + b^2)]*der(der(phi)) = F*l*cot(steer) + m*l^2*cot(steer)*der(steer)/sin(steer)^2*der(phi) (corrected (3.30)).</p>
<p>Equations of motion derived by nhbridge 0.1.0 with <b>Lagrange's equations with multipliers</b> (method <code>lagrange</code>): multiplier DAE, constraints at acceleration level (index 1).</p>
<p>Variables: each generalized coordinate under its own name, its velocity as <code>der_&lt;name&gt;</code>; <code>residual</code> monitors the constraints.</p>
<p>Inputs: F.</p>
<p>Export form (chosen automatically): implicit: multiplier DAE with the constraints at acceleration level (index 1), accelerations implicit in M [der(v), lambda] = F: Rumoca 0.9 takes single-acceleration rows as derivative rows, so no structure of docs/compiler-defects is present; no index reduction needed.</p>
<p>Equations (in the notation of the system file):</p>
<ul>
<li>T = <code>(0.5)*J*der(phi)^2 + (0.5)*m*(der(x)^2 + der(y)^2)</code></li>
<li>D = <code>(0.5)*c_d*(der(x)^2 + der(y)^2)</code></li>
<li>Q<sub>x</sub> = <code>F*cos(phi)</code></li>
<li>Q<sub>y</sub> = <code>F*sin(phi)</code></li>
<li>constraints.nonholonomic[1]: <code>b*der(phi) + der(x)*sin(phi) - der(y)*cos(phi)</code> = 0</li>
<li>constraints.nonholonomic[2]: <code>-a*der(phi)*cos(steer0 + steer1*sin(steer_w*time)) + der(x)*sin(phi + steer0 + steer1*sin(steer_w*time)) - der(y)*cos(phi + steer0 + steer1*sin(steer_w*time))</code> = 0</li>
</ul>
<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q + A^T*lambda</code> with the multipliers <code>lambda</code>, the constraints differentiated to acceleration level (index 1); <code>A</code> is the Jacobian of the velocity-level constraints <code>A*der(q) + a0 = 0</code>.</p>
</html>"));
end SteeredCar;
