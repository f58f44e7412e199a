import re

import pandas as pd

prompt: str = PROMPT
file = re.search(r"(\S+\.csv)", prompt).group(1)
tokens = re.search(r"as one of (.*?) \(without the quotes", prompt).group(1)
tokens = {t.lower() for t in re.findall(r'"([^"]*)"', tokens)} | {""}
# The statistic is asked after "Then:"; the rule before it may name a mean or a median too.
question = prompt.split("Then: ")[-1]
column = re.search(
    r"(?:the mean|the sum|the sample standard deviation \(dividing by n - 1\)) of (\w+)", question
).group(1)

raw = pd.read_csv(file, dtype=str, keep_default_na=False).drop_duplicates(subset="id")


def cell(text: str) -> str | None:
    """A cell, or None when it is one of the missing-value tokens (in any capitals)."""
    return None if text.strip().lower() in tokens else text.strip()


data = raw.map(cell)
for name in data.columns:
    if name not in ("id", "city"):
        data[name] = data[name].str.replace(",", "").astype(float)

if "in any column" in prompt:
    data = data.dropna()
elif m := re.search(r"Drop the rows where (\w+) or (\w+) is missing", prompt):
    data = data.dropna(subset=[m.group(1), m.group(2)])
elif "of the same city" in prompt:
    data = data.dropna(subset=["city"])
    data[column] = data[column].fillna(data.groupby("city")[column].transform("median"))
elif "with the mean" in prompt:
    data[column] = data[column].fillna(data[column].mean())
else:
    data[column] = data[column].fillna(data[column].median())

values = data[column]
if "the mean of" in question:
    value = values.mean()
elif "the sum of" in question:
    value = values.sum()
else:
    value = values.std(ddof=1)
print(f"{value:.2f}")
