import math
import re

import numpy as np
from scipy.optimize import brentq

expression = re.search(r"The equation `(.+) = 0`", PROMPT).group(1)
a, b = (float(v) for v in re.search(r"interval \[(\S+), (\S+)\]", PROMPT).groups())
code = compile(expression, "equation", "eval")


def f(x: float) -> float:
    return eval(code, {"math": math, "x": x})


if "exactly one real solution" in PROMPT:
    answer = brentq(f, a, b, xtol=1e-15, rtol=1e-15, maxiter=500)
else:
    # Every sign change on a fine grid, each refined.
    vectorised = {"sin": np.sin, "cos": np.cos, "exp": np.exp, "atan": np.arctan}
    xs = np.linspace(a, b, 400_001)
    ys = eval(code, {"math": type("math", (), vectorised), "x": xs})
    changes = np.nonzero(ys[:-1] * ys[1:] <= 0)[0]
    roots = sorted(
        {round(brentq(f, xs[i], xs[i + 1], xtol=1e-15, rtol=1e-15), 12) for i in changes}
    )
    if "second smallest" in PROMPT:
        answer = roots[1]
    elif "smallest" in PROMPT:
        answer = roots[0]
    elif "largest" in PROMPT:
        answer = roots[-1]
    else:
        answer = sum(roots)
print(f"{answer:.6f}")
