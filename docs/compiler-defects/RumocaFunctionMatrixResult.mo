model RumocaFunctionMatrixResult
  function twoColumns
    input Real s;
    output Real X[3, 2];
  algorithm
    X := {{1, 2}, {3, 4}, {5, 6}}*s;
  end twoColumns;
  Real x(start=1, fixed=true);
  Real x21;
equation
  der(x) = 0;
  x21 = twoColumns(x)[2, 1];
end RumocaFunctionMatrixResult;
