within Modelica.Mechanics.Rotational;
package Interfaces "Connectors of one-dimensional rotational mechanics"
end Interfaces;
