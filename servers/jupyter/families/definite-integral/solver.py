import math
import re

from scipy.integrate import quad

expression = re.search(r"f\(x\) = `([^`]+)`", PROMPT).group(1)
a, b = (float(v) for v in re.search(r"from (\S+) to (\S+?)\. ", PROMPT).groups())


def f(x):
    return eval(expression, {"math": math, "x": x})


value, _ = quad(f, a, b, epsabs=1e-11, epsrel=1e-11, limit=500)
print(f"{value:.6f}")
