within;
package Modelica "Stand-in for the parts of the Modelica Standard Library 4.0.0 that nhbridge's --msl export uses"
  annotation(version="4.0.0", Documentation(info="<html>
<p>Written for nhbridge's tests (<code>tests/test_msl_flanges.py</code>); not the MSL's text, which is not
copied here. It has the MSL's layout (one folder per package, <code>within</code> clauses), class names and
declarations for what a model exported with <code>nhbridge modelica --msl</code> refers to:
<code>Modelica.Units.SI</code> (the types of the flanges and of the test assembly) and
<code>Modelica.Mechanics.Rotational.Interfaces</code> / <code>Modelica.Mechanics.Translational.Interfaces</code>
(<code>Flange</code>, <code>Flange_a</code>, <code>Flange_b</code>). The same test runs against the real MSL
where one is on <code>MODELICAPATH</code>.</p>
</html>"));
end Modelica;
