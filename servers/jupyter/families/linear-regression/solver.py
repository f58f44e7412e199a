import re

import numpy as np
import pandas as pd

file = re.search(r"The file (\S+) in your home", PROMPT).group(1)
data = pd.read_csv(file)
target = re.search(r"linear model (\w+) = ", PROMPT).group(1)
features = [c for c in data.columns if c != target]
design = np.column_stack([np.ones(len(data))] + [data[f].to_numpy() for f in features])
fit, *_ = np.linalg.lstsq(design, data[target].to_numpy(), rcond=None)

if "the slope b" in PROMPT:
    value = fit[1]
elif m := re.search(r"the coefficient of (\w+)\?", PROMPT):
    value = fit[1 + features.index(m.group(1))]
elif "the intercept" in PROMPT:
    value = fit[0]
else:
    point = dict(re.findall(r"(\w+) = (-?[\d.]+)", PROMPT.split(" at ")[-1]))
    value = fit[0] + sum(fit[1 + j] * float(point[f]) for j, f in enumerate(features))
print(f"{value:.3f}")
