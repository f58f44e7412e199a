import re
from pathlib import Path

import pandas as pd

prompt: str = PROMPT
target = re.search(r"other than (\w+),", prompt).group(1)
file = re.search(r"(\S+\.csv)", prompt).group(1)
data = pd.read_csv(file, na_values=["-999"])
if Path(f"{target}s.csv").exists():
    scored = pd.read_csv(f"{target}s.csv", na_values=["-999"]).drop_duplicates(subset="id")
    data = data.merge(scored, on="id", how="inner")
# pandas correlates each pair over the rows where both have a value.
r = data.corr(method="pearson", numeric_only=True)[target].drop(target)
if "either direction" in prompt:
    r = r.abs()
print(r.idxmax())
