model RumocaFunctionRelationFrozen
  "step(u) is 1, or 2 where u > 0.5: Rumoca keeps the relation's start value, 1 for the whole run"
  function step
    input Real u;
    output Real y;
  algorithm
    y := 1;
    if u > 0.5 then
      y := 2;
    end if;
  end step;
  Real x(start=0, fixed=true);
  Real y "step(x): 1 while x <= 0.5, then 2";
equation
  der(x) = 1;
  y = step(x);
end RumocaFunctionRelationFrozen;
