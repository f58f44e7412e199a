import re

import numpy as np
import pandas as pd

prompt: str = PROMPT
file = re.search(r"(\S+\.csv)", prompt).group(1)
data = pd.read_csv(file, dtype={"reading_id": str, "sensor": str})
quantity = [c for c in data.columns if c not in ("reading_id", "sensor", "unit")][0]

# Sensor faults (-999 or empty) are no readings at all.
data = data[data[quantity].notna() & (data[quantity] != -999)].copy()
if "unit" in data.columns:
    data = data.drop_duplicates(subset="reading_id")
    factor, small = re.search(r"\(1 \S+ = (\d+) (\S+)\); work in", prompt).groups()
    finer = data["unit"] == small
    data.loc[finer, quantity] = data.loc[finer, quantity] / float(factor)

groups = (
    data.groupby("sensor")[quantity]
    if "separately for each sensor" in prompt
    else data.groupby(lambda _: 0)[quantity]
)

if m := re.search(r"is greater than ([\d.]+)", prompt):
    k = float(m.group(1))
    ddof = 0 if "population standard deviation" in prompt else 1
    mean = groups.transform("mean")
    sd = groups.transform(lambda s: s.std(ddof=ddof))
    flagged = (data[quantity] - mean).abs() / sd > k
else:
    factor = float(re.search(r"below Q1 - ([\d.]+)", prompt).group(1))
    q1 = groups.transform(lambda s: np.percentile(s, 25))
    q3 = groups.transform(lambda s: np.percentile(s, 75))
    iqr = q3 - q1
    flagged = (data[quantity] < q1 - factor * iqr) | (data[quantity] > q3 + factor * iqr)

if "the number of readings that are outliers" in prompt:
    print(int(flagged.sum()))
elif "the sum of the" in prompt:
    print(f"{data.loc[flagged, quantity].sum():.2f}")
else:
    print(f"{data.loc[~flagged, quantity].mean():.3f}")
