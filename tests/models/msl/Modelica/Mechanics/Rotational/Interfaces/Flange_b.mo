within Modelica.Mechanics.Rotational.Interfaces;
connector Flange_b "One-dimensional rotational flange of a shaft (non-filled circle icon)"
  extends Flange;
  annotation(defaultComponentName="flange_b", Icon(coordinateSystem(preserveAspectRatio=true,
    extent={{-100,-100},{100,100}}), graphics={Ellipse(extent={{-98,100},{102,-100}}, fillColor={255,255,255},
    fillPattern=FillPattern.Solid)}));
end Flange_b;
