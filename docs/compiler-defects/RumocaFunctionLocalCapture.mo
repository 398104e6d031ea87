model RumocaFunctionLocalCapture
  "solve(A, b) by LU with partial pivoting keeps b in its local r; the model has a parameter r as well"
  function solve
    input Real A[2, 2];
    input Real b[2];
    output Real x[2];
  protected
    Real M[2, 2];
    Real r[2];
    Real t;
    Real f;
    Integer p;
  algorithm
    M := A;
    r := b;
    p := 1;
    if noEvent(abs(M[2, 1]) > abs(M[1, 1])) then
      p := 2;
    end if;
    if p == 2 then
      t := M[1, 1];
      M[1, 1] := M[2, 1];
      M[2, 1] := t;
      t := M[1, 2];
      M[1, 2] := M[2, 2];
      M[2, 2] := t;
      t := r[1];
      r[1] := r[2];
      r[2] := t;
    end if;
    f := M[2, 1]/M[1, 1];
    M[2, 2] := M[2, 2] - f*M[1, 2];
    r[2] := r[2] - f*r[1];
    x[2] := r[2]/M[2, 2];
    x[1] := (r[1] - M[1, 2]*x[2])/M[1, 1];
  end solve;
  parameter Real r = 0.5;
  Real th(start=0, fixed=true);
  Real a;
  Real c;
  Real x1 "0.5/(cos(th) + 0.5)";
  Real x2 "cos(th)/(cos(th) + 0.5)";
equation
  der(th) = 1;
  a = -r;
  c = cos(th);
  x1 = solve({{c, a}, {1, 1}}, {0, 1})[1];
  x2 = solve({{c, a}, {1, 1}}, {0, 1})[2];
end RumocaFunctionLocalCapture;
