import re

import pandas as pd

file, target = re.search(r"The file (\S+) in your home .*? other than (\w+),", PROMPT).groups()
data = pd.read_csv(file)
r = data.corr(method="pearson")[target].drop(target)
if "either direction" in PROMPT:
    r = r.abs()
print(r.idxmax())
