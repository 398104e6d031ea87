within Modelica.Mechanics.Rotational.Interfaces;
connector Flange_a "One-dimensional rotational flange of a shaft (filled circle icon)"
  extends Flange;
  annotation(defaultComponentName="flange_a", Icon(coordinateSystem(preserveAspectRatio=true,
    extent={{-100,-100},{100,100}}), graphics={Ellipse(extent={{-100,100},{100,-100}}, fillColor={95,95,95},
    fillPattern=FillPattern.Solid)}));
end Flange_a;
