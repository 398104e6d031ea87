within Modelica.Mechanics.Translational;
package Interfaces "Connectors of one-dimensional translational mechanics"
end Interfaces;
