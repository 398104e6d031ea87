within Modelica;
package Units "Type definitions with units (the MSL's Modelica.Units: the types the flanges and tests use)"
  package SI "SI units"
    type Angle = Real(final quantity="Angle", final unit="rad", displayUnit="deg");
    type Length = Real(final quantity="Length", final unit="m");
    type Position = Length;
    type Force = Real(final quantity="Force", final unit="N");
    type Torque = Real(final quantity="Torque", final unit="N.m");
    type AngularVelocity = Real(final quantity="AngularVelocity", final unit="rad/s");
    type MomentOfInertia = Real(final quantity="MomentOfInertia", final unit="kg.m2");
    type Inertia = MomentOfInertia;
    type RotationalSpringConstant = Real(final quantity="RotationalSpringConstant", final unit="N.m/rad");
    type TranslationalSpringConstant = Real(final quantity="TranslationalSpringConstant", final unit="N/m");
  end SI;
end Units;
