within Modelica.Mechanics.Translational.Interfaces;
connector Flange_a "One-dimensional translational flange (filled square icon)"
  extends Flange;
  annotation(defaultComponentName="flange_a", Icon(coordinateSystem(preserveAspectRatio=true,
    extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,-100},{100,100}}, fillColor={0,127,0},
    fillPattern=FillPattern.Solid)}));
end Flange_a;
