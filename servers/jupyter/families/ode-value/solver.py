import math
import re

from scipy.integrate import solve_ivp

NUMBER = r"(-?\d+(?:\.\d+)?)"
expressions = re.findall(r"= `([^`]+)`", PROMPT)
asked, t_end = re.search(r"What is ([xy])\(" + NUMBER + r"\)\?", PROMPT).groups()
t_end = float(t_end)
codes = [compile(e, "rhs", "eval") for e in expressions]


def value(code, **names):
    return eval(code, {"math": math, **names})


if "d²y/dt²" in PROMPT:
    start = [float(re.search(r"y\(0\) = " + NUMBER, PROMPT).group(1))]
    start.append(float(re.search(r"dy/dt\(0\) = " + NUMBER, PROMPT).group(1)))

    def rhs(t, s):
        return [s[1], value(codes[0], t=t, y=s[0], v=s[1])]

elif "dx/dt" in PROMPT:
    start = [float(re.search(name + r"\(0\) = " + NUMBER, PROMPT).group(1)) for name in "xy"]

    def rhs(t, s):
        return [value(c, t=t, x=s[0], y=s[1]) for c in codes]

else:
    start = [float(re.search(r"y\(0\) = " + NUMBER, PROMPT).group(1))]

    def rhs(t, s):
        return [value(codes[0], t=t, y=s[0])]


solution = solve_ivp(rhs, (0.0, t_end), start, method="DOP853", rtol=1e-11, atol=1e-12)
state = solution.y[:, -1]
answer = state[1] if asked == "y" and "dx/dt" in PROMPT else state[0]
print(f"{answer:.6f}")
