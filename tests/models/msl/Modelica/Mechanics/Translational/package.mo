within Modelica.Mechanics;
package Translational "One-dimensional translational mechanics"
end Translational;
