import re
from pathlib import Path

import numpy as np
import pandas as pd

prompt: str = PROMPT
target = re.search(r"linear model (\w+) = ", prompt).group(1)
model = re.search(r"linear model \w+ = (.*?)(?: by ordinary|, by ordinary|\.)", prompt).group(1)
features = re.findall(r"× (\w+)", model)

if Path("features.csv").exists():
    measured = pd.read_csv("features.csv", na_values=["NA"]).drop_duplicates(subset="id")
    outcomes = pd.read_csv("outcomes.csv", na_values=["NA"]).drop_duplicates(subset="id")
    data = measured.merge(outcomes, on="id", how="inner")
    if m := re.search(r"(\w+) is recorded in (\w+) or in (\w+), .*?\((\d+) ", prompt):
        feature, base, small, factor = m.groups()
        in_small = data[f"{feature}_unit"] == small
        data.loc[in_small, feature] = data.loc[in_small, feature] / float(factor)
else:
    file = re.search(r"(\S+\.csv)", prompt).group(1)
    data = pd.read_csv(file, na_values=["NA"])
data = data.dropna(subset=[*features, target])

design = np.column_stack([np.ones(len(data))] + [data[f].to_numpy(float) for f in features])
fit, *_ = np.linalg.lstsq(design, data[target].to_numpy(float), rcond=None)

if "the slope b" in prompt:
    value = fit[1]
elif m := re.search(r"the coefficient of (\w+)", prompt):
    value = fit[1 + features.index(m.group(1))]
elif "the intercept" in prompt:
    value = fit[0]
else:
    point = dict(re.findall(r"(\w+) = (-?\d+(?:\.\d+)?)", prompt.split(f"for {target} at ")[-1]))
    value = fit[0] + sum(fit[1 + j] * float(point[f]) for j, f in enumerate(features))
print(f"{value:.3f}")
