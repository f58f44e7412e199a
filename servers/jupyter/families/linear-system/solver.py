import re

import numpy as np
import pandas as pd

LONG = r"The files (\S+) and (\S+) in your home directory hold a system of (\d+) linear"
if (m := re.search(LONG, PROMPT)) and "in long format" in PROMPT:
    n = int(m.group(3))
    entries = pd.read_csv(m.group(1))
    sides = pd.read_csv(m.group(2))
    a = np.zeros((n, n))
    for row in entries.itertuples():
        a[int(row.equation) - 1, int(row.variable[1:]) - 1] = row.coefficient
    b = np.zeros(n)
    for row in sides.itertuples():
        b[int(row.equation) - 1] = row.value
elif m := re.search(r"The files (\S+) and (\S+) in your home", PROMPT):
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
