within Modelica;
package Mechanics "One-dimensional mechanics (as the MSL's Modelica.Mechanics, which imports Modelica.Units.SI)"
  import Modelica.Units.SI;
end Mechanics;
