import re

import pandas as pd

sheet = re.search(r'sheet,? "([^"]+)"', PROMPT).group(1)
sales = pd.read_excel("sales.xlsx", sheet_name=sheet)
sales["month"] = pd.to_datetime(sales["date"]).dt.strftime("%Y-%m")
aggfunc = "mean" if "mean revenue per row" in PROMPT else "sum"
pivot = sales.pivot_table(index="month", columns="category", values="revenue", aggfunc=aggfunc)

if m := re.search(r'cell for month (\d{4}-\d{2}), category "([^"]+)"', PROMPT):
    value = pivot.loc[m.group(1), m.group(2)]
elif m := re.search(r"row for month (\d{4}-\d{2})", PROMPT):
    value = pivot.loc[m.group(1)].sum()
else:
    category = re.search(r'column for category "([^"]+)"', PROMPT).group(1)
    value = pivot[category].sum()
print(f"{value:.2f}")
