model RumocaFunctionVariableIndex
  function clearLargest
    input Real a[2];
    output Real b[2];
  protected
    Integer p;
  algorithm
    b := a;
    p := 1;
    if abs(a[2]) > abs(a[1]) then
      p := 2;
    end if;
    b[p] := 0;
  end clearLargest;
  Real x(start=1, fixed=true);
  Real y;
equation
  der(x) = 0;
  y = clearLargest({x, 2*x})[1];
end RumocaFunctionVariableIndex;
