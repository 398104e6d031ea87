within Modelica.Mechanics.Translational.Interfaces;
connector Flange_b "One-dimensional translational flange (non-filled square icon)"
  extends Flange;
  annotation(defaultComponentName="flange_b", Icon(coordinateSystem(preserveAspectRatio=true,
    extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,-100},{100,100}}, fillColor={255,255,255},
    fillPattern=FillPattern.Solid)}));
end Flange_b;
