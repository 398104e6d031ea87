within;
package NHBridge "Connectors of the models nhbridge exports: copies of the MSL's flanges"
  package Mechanics "Flanges of one-dimensional mechanical systems"
    package Rotational "Rotational flanges"
      package Interfaces "Flange_a and Flange_b of Modelica.Mechanics.Rotational.Interfaces"
        connector Flange_a "One-dimensional rotational flange (filled circle icon)"
          Real phi(final quantity="Angle", final unit="rad", displayUnit="deg") "Absolute rotation angle of flange";
          flow Real tau(final quantity="Torque", final unit="N.m") "Cut torque in the flange";
          annotation(defaultComponentName="flange_a", Icon(coordinateSystem(preserveAspectRatio=true, extent={{-100,-100},{100,100}}), graphics={Ellipse(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={95,95,95}, fillPattern=FillPattern.Solid)}),
            Documentation(info="<html><p>A copy of <code>Modelica.Mechanics.Rotational.Interfaces.Flange_a</code> with the same variables (phi in rad, flow tau in N.m), so that the two connect.</p></html>"));
        end Flange_a;
        connector Flange_b "One-dimensional rotational flange (non-filled circle icon)"
          Real phi(final quantity="Angle", final unit="rad", displayUnit="deg") "Absolute rotation angle of flange";
          flow Real tau(final quantity="Torque", final unit="N.m") "Cut torque in the flange";
          annotation(defaultComponentName="flange_b", Icon(coordinateSystem(preserveAspectRatio=true, extent={{-100,-100},{100,100}}), graphics={Ellipse(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid)}),
            Documentation(info="<html><p>A copy of <code>Modelica.Mechanics.Rotational.Interfaces.Flange_b</code> with the same variables (phi in rad, flow tau in N.m), so that the two connect.</p></html>"));
        end Flange_b;
      end Interfaces;
    end Rotational;
    package Translational "Translational flanges"
      package Interfaces "Flange_a and Flange_b of Modelica.Mechanics.Translational.Interfaces"
        connector Flange_a "One-dimensional translational flange (filled square icon)"
          Real s(final quantity="Length", final unit="m") "Absolute position of flange";
          flow Real f(final quantity="Force", final unit="N") "Cut force directed into flange";
          annotation(defaultComponentName="flange_a", Icon(coordinateSystem(preserveAspectRatio=true, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={95,95,95}, fillPattern=FillPattern.Solid)}),
            Documentation(info="<html><p>A copy of <code>Modelica.Mechanics.Translational.Interfaces.Flange_a</code> with the same variables (s in m, flow f in N), so that the two connect.</p></html>"));
        end Flange_a;
        connector Flange_b "One-dimensional translational flange (non-filled square icon)"
          Real s(final quantity="Length", final unit="m") "Absolute position of flange";
          flow Real f(final quantity="Force", final unit="N") "Cut force directed into flange";
          annotation(defaultComponentName="flange_b", Icon(coordinateSystem(preserveAspectRatio=true, extent={{-100,-100},{100,100}}), graphics={Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, fillPattern=FillPattern.Solid)}),
            Documentation(info="<html><p>A copy of <code>Modelica.Mechanics.Translational.Interfaces.Flange_b</code> with the same variables (s in m, flow f in N), so that the two connect.</p></html>"));
        end Flange_b;
      end Interfaces;
    end Translational;
  end Mechanics;
  annotation(Documentation(info="<html><p>The flanges of exported models with <code>[ports]</code> when they are exported without <code>--msl</code>: the same variables, units and flow prefixes as the Modelica Standard Library's, so that they connect to MSL components.</p></html>"));
end NHBridge;
