within;
package MslPortAssembly "PortAssembly.mo written against the Modelica Standard Library's flanges: the sleigh exported with --msl"
  model Motor "A ramp torque tau0 + slope*time driving an inertia"
    parameter Modelica.Units.SI.Inertia J = 0.05 "moment of inertia of the rotor";
    parameter Modelica.Units.SI.Torque tau0 = 0.2 "torque at time 0";
    parameter Real slope(unit="N.m/s") = 0.1 "torque rate";
    Modelica.Mechanics.Rotational.Interfaces.Flange_b flange "shaft";
    Modelica.Units.SI.Angle phi(start=0.0, fixed=true) "rotor angle";
    Modelica.Units.SI.AngularVelocity w(start=0.0, fixed=true) "rotor speed";
  equation
    flange.phi = phi;
    der(phi) = w;
    J*der(w) = tau0 + slope*time + flange.tau;
  end Motor;

  model TorsionSpring "Linear torsion spring, as Modelica.Mechanics.Rotational.Components.Spring"
    parameter Modelica.Units.SI.RotationalSpringConstant c = 0.8 "spring constant";
    Modelica.Mechanics.Rotational.Interfaces.Flange_a flange_a;
    Modelica.Mechanics.Rotational.Interfaces.Flange_b flange_b;
  equation
    flange_b.tau = c*(flange_b.phi - flange_a.phi);
    flange_a.tau = -flange_b.tau;
  end TorsionSpring;

  model LinearSpring "Linear spring, as Modelica.Mechanics.Translational.Components.Spring"
    parameter Modelica.Units.SI.TranslationalSpringConstant c = 0.5 "spring constant";
    Modelica.Mechanics.Translational.Interfaces.Flange_a flange_a;
    Modelica.Mechanics.Translational.Interfaces.Flange_b flange_b;
  equation
    flange_b.f = c*(flange_b.s - flange_a.s);
    flange_a.f = -flange_b.f;
  end LinearSpring;

  model Fixed "Flange fixed at s0, as Modelica.Mechanics.Translational.Components.Fixed"
    parameter Modelica.Units.SI.Position s0 = 0.0 "position";
    Modelica.Mechanics.Translational.Interfaces.Flange_b flange;
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
  annotation(uses(Modelica(version="4.0.0")));
end MslPortAssembly;
