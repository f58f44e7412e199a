import re

import numpy as np
import pandas as pd

file, quantity = re.search(
    r"The file (\S+) in your home .*?: reading_id, sensor, (\w+)\.", PROMPT
).groups()
data = pd.read_csv(file)
groups = (
    data.groupby("sensor")[quantity]
    if "separately for each sensor" in PROMPT
    else data.groupby(lambda _: 0)[quantity]
)

if m := re.search(r"is greater than ([\d.]+)", PROMPT):
    k = float(m.group(1))
    ddof = 0 if "population standard deviation" in PROMPT else 1
    mean = groups.transform("mean")
    sd = groups.transform(lambda s: s.std(ddof=ddof))
    flagged = (data[quantity] - mean).abs() / sd > k
else:
    factor = float(re.search(r"below Q1 - ([\d.]+)", PROMPT).group(1))
    q1 = groups.transform(lambda s: np.percentile(s, 25))
    q3 = groups.transform(lambda s: np.percentile(s, 75))
    iqr = q3 - q1
    flagged = (data[quantity] < q1 - factor * iqr) | (data[quantity] > q3 + factor * iqr)

if "How many" in PROMPT:
    print(int(flagged.sum()))
elif "sum of the" in PROMPT:
    print(f"{data.loc[flagged, quantity].sum():.2f}")
else:
    print(f"{data.loc[~flagged, quantity].mean():.3f}")
