import re

import numpy as np
import pandas as pd

if m := re.search(r"The files (\S+) and (\S+) in your home", PROMPT):
    a = np.loadtxt(m.group(1), delimiter=",", ndmin=2)
    b = np.loadtxt(m.group(2), delimiter=",", ndmin=1)
else:
    table = pd.read_csv(re.search(r"The file (\S+) in your home", PROMPT).group(1))
    b = table.pop("rhs").to_numpy()
    a = table.to_numpy()
x = np.linalg.solve(a, b)
if m := re.search(r"the value of x(\d+)", PROMPT):
    answer = x[int(m.group(1)) - 1]
elif "the sum of all" in PROMPT:
    answer = x.sum()
else:
    answer = x.max()
print(f"{answer:.6f}")
