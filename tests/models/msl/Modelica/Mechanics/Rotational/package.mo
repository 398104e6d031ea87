within Modelica.Mechanics;
package Rotational "One-dimensional rotational mechanics"
end Rotational;
