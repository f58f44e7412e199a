import re

import numpy as np

name = re.search(r"The file (\S+) in your home", PROMPT).group(1)
n = int(re.search(r"symmetric (\d+) ×", PROMPT).group(1))
separator = "," if name.endswith(".csv") else None
rows = [[float(v) for v in line.split(separator)] for line in open(name) if line.strip()]
matrix = np.zeros((n, n))
for i, row in enumerate(rows):
    # A row of the upper triangle starts at the diagonal.
    start = n - len(row)
    matrix[i, start:] = row
    matrix[start:, i] = row
eigenvalues = np.linalg.eigvalsh(matrix)
if "spectral radius" in PROMPT:
    answer = np.abs(eigenvalues).max()
elif "second largest" in PROMPT:
    answer = np.sort(eigenvalues)[-2]
elif "smallest" in PROMPT:
    answer = eigenvalues.min()
else:
    answer = eigenvalues.max()
print(f"{answer:.6f}")
