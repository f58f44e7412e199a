import math
import re

from scipy.optimize import brentq

expression = re.search(r"The equation `(.+) = 0`", PROMPT).group(1)
a, b = (float(v) for v in re.search(r"interval \[(\S+), (\S+)\]", PROMPT).groups())


def f(x):
    return eval(expression, {"math": math, "x": x})


root = brentq(f, a, b, xtol=1e-15, rtol=1e-15, maxiter=500)
print(f"{root:.6f}")
