import re

import pandas as pd

trips = pd.read_parquet("trips.parquet")
condition = re.search(r"Consider the trips whose (.*?)\. (How|What)", PROMPT).group(1)
mask = pd.Series(True, index=trips.index)
for clause in condition.split(", and "):
    if m := re.fullmatch(r'zone is "([^"]+)" or "([^"]+)"', clause):
        mask &= trips["zone"].isin([m.group(1), m.group(2)])
    elif m := re.fullmatch(r'(\w+) is "([^"]+)"', clause):
        mask &= trips[m.group(1)] == m.group(2)
    elif m := re.fullmatch(r'(\w+) is not "([^"]+)"', clause):
        mask &= trips[m.group(1)] != m.group(2)
    elif m := re.fullmatch(r"(\w+) is at least (\d+)", clause):
        mask &= trips[m.group(1)] >= int(m.group(2))
    elif m := re.fullmatch(r"(\w+) is greater than ([\d.]+)", clause):
        mask &= trips[m.group(1)] > float(m.group(2))
    else:
        raise ValueError(clause)
rows = trips[mask]
if "How many trips" in PROMPT:
    print(len(rows))
elif "sum of fare" in PROMPT:
    print(f"{rows['fare'].sum():.2f}")
else:
    print(f"{rows['distance_km'].mean():.3f}")
