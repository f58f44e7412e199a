import re

import pandas as pd

file = re.search(r"The file (\S+) in your home", PROMPT).group(1)
tokens = re.search(r"as one of (.*?) \(without the quotes\)", PROMPT).group(1)
tokens = re.findall(r'"([^"]*)"', tokens)
data = pd.read_csv(file, na_values=tokens, keep_default_na=True)
column = re.search(r"Then what is .*? of (\w+)\?", PROMPT).group(1)

if "in any column" in PROMPT:
    data = data.dropna()
elif m := re.search(r"Drop the rows where (\w+) or (\w+) is missing", PROMPT):
    data = data.dropna(subset=[m.group(1), m.group(2)])
else:
    data[column] = data[column].fillna(data[column].median())

values = data[column]
if "the mean of" in PROMPT:
    value = values.mean()
elif "the sum of" in PROMPT:
    value = values.sum()
else:
    value = values.std(ddof=1)
print(f"{value:.2f}")
