import numpy as np

print(f"{max(np.linalg.eigvalsh(np.array([[4, 1, 2], [1, 3, 0.5], [2, 0.5, 5]]))):.8f}")
