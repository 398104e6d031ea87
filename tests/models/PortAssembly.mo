within;
package PortAssembly "An exported model (PortedSleigh, tests/models/sleigh_ports.toml) connected as a component"
  model Motor "A ramp torque tau0 + slope*time driving an inertia"
    parameter Real J(unit="kg.m2") = 0.05 "moment of inertia of the rotor";
    parameter Real tau0(unit="N.m") = 0.2 "torque at time 0";
    parameter Real slope(unit="N.m/s") = 0.1 "torque rate";
    NHBridge.Mechanics.Rotational.Interfaces.Flange_b flange "shaft";
    Real phi(start=0.0, fixed=true, unit="rad") "rotor angle";
    Real w(start=0.0, fixed=true, unit="rad/s") "rotor speed";
  equation
    flange.phi = phi;
    der(phi) = w;
    J*der(w) = tau0 + slope*time + flange.tau;
  end Motor;

  model TorsionSpring "Linear torsion spring, as Modelica.Mechanics.Rotational.Components.Spring"
    parameter Real c(unit="N.m/rad") = 0.8 "spring constant";
    NHBridge.Mechanics.Rotational.Interfaces.Flange_a flange_a;
    NHBridge.Mechanics.Rotational.Interfaces.Flange_b flange_b;
  equation
    flange_b.tau = c*(flange_b.phi - flange_a.phi);
    flange_a.tau = -flange_b.tau;
  end TorsionSpring;

  model LinearSpring "Linear spring, as Modelica.Mechanics.Translational.Components.Spring"
    parameter Real c(unit="N/m") = 0.5 "spring constant";
    NHBridge.Mechanics.Translational.Interfaces.Flange_a flange_a;
    NHBridge.Mechanics.Translational.Interfaces.Flange_b flange_b;
  equation
    flange_b.f = c*(flange_b.s - flange_a.s);
    flange_a.f = -flange_b.f;
  end LinearSpring;

  model Fixed "Flange fixed at s0, as Modelica.Mechanics.Translational.Components.Fixed"
    parameter Real s0(unit="m") = 0.0 "position";
    NHBridge.Mechanics.Translational.Interfaces.Flange_b flange;
  equation
    flange.s = s0;
  end Fixed;

  model Assembly "Motor -> torsion spring -> sleigh heading; sleigh x -> linear spring -> ground"
    PortedSleigh sleigh;
    Motor motor;
    TorsionSpring spring;
    LinearSpring spring_x;
    Fixed ground;
  equation
    connect(motor.flange, spring.flange_a);
    connect(spring.flange_b, sleigh.flange_theta);
    connect(sleigh.flange_x, spring_x.flange_a);
    connect(spring_x.flange_b, ground.flange);
    annotation(experiment(StopTime=5.0, Interval=0.01, Tolerance=1e-10));
  end Assembly;
end PortAssembly;
