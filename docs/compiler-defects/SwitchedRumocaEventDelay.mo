model SwitchedRumocaEventDelay
  Real x(start=0, fixed=true);
  Boolean up(start=true, fixed=true);
equation
  der(x) = if up then 1 else -1;
  when x > 0.3 then
    up = false;
  end when;
end SwitchedRumocaEventDelay;
