within Modelica.Mechanics.Translational.Interfaces;
connector Flange "One-dimensional translational flange (the base class of Flange_a and Flange_b)"
  SI.Position s "Absolute position of flange";
  flow SI.Force f "Cut force directed into flange";
end Flange;
