import re
from pathlib import Path

import pandas as pd

prompt: str = PROMPT
if Path("trips.parquet").exists():
    trips = pd.read_parquet("trips.parquet")
else:
    parts = [pd.read_parquet(p) for p in sorted(Path("trips").glob("*.parquet"))]
    trips = pd.concat(parts, ignore_index=True)
if "fare_cents" in trips.columns:
    # The older parts' schema: the fare in cents.
    trips["fare"] = trips["fare"].fillna(trips["fare_cents"] / 100)
trips = trips.drop_duplicates(subset="trip_id")
if Path("zones.parquet").exists():
    trips = trips.merge(pd.read_parquet("zones.parquet"), on="zone_id", how="left")
trips["zone"] = trips["zone"].str.lower()

condition = re.search(r"trips whose ([^.]*)\.", prompt).group(1)
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
    elif m := re.fullmatch(r"(\w+) is greater than (\d+)", clause):
        mask &= trips[m.group(1)] > float(m.group(2))
    else:
        raise ValueError(clause)
rows = trips[mask]
if "the number of matching trips" in prompt:
    print(len(rows))
elif "sum of fare" in prompt:
    print(f"{rows['fare'].sum():.2f}")
else:
    print(f"{rows['distance_km'].mean():.3f}")
