import re

import numpy as np

name = re.search(r"The file (\S+) in your home", PROMPT).group(1)
matrix = np.loadtxt(name, delimiter="," if name.endswith(".csv") else None, ndmin=2)
eigenvalues = np.linalg.eigvalsh(matrix)
if "spectral radius" in PROMPT:
    answer = np.abs(eigenvalues).max()
elif "smallest" in PROMPT:
    answer = eigenvalues.min()
else:
    answer = eigenvalues.max()
print(f"{answer:.6f}")
