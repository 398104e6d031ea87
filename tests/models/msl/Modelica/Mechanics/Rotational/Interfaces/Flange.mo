within Modelica.Mechanics.Rotational.Interfaces;
connector Flange "One-dimensional rotational flange (the base class of Flange_a and Flange_b)"
  SI.Angle phi "Absolute rotation angle of flange";
  flow SI.Torque tau "Cut torque in the flange";
end Flange;
