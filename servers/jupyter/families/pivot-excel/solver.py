import re

import pandas as pd

prompt: str = PROMPT


def table(raw: pd.DataFrame) -> pd.DataFrame:
    """A sheet's sales: the rows below its header row (a title block may sit above it), with
    the Total row and anything else that is not a dated sale left out."""
    start = raw.index[raw.iloc[:, 0].astype(str).str.strip() == "date"][0]
    rows = raw.loc[start + 1 :].copy()
    rows.columns = [str(c).strip() for c in raw.loc[start]]
    rows["date"] = pd.to_datetime(rows["date"], errors="coerce")
    return rows[rows["date"].notna()]


def money(value: object) -> float:
    return float(str(value).replace("$", "").replace(",", "").strip())


if m := re.search(r"one per region \(([^)]*)\)", prompt):
    names = m.group(1).split(", ")
else:
    names = [re.search(r'sheet,? "([^"]+)"', prompt).group(1)]
sheets = pd.read_excel("sales.xlsx", sheet_name=names, header=None)
sales = pd.concat([table(sheets[name]) for name in names], ignore_index=True)
sales["category"] = sales["category"].astype(str).str.strip().str.lower()
sales["revenue"] = sales["revenue"].map(money)
sales["month"] = sales["date"].dt.strftime("%Y-%m")
aggfunc = "mean" if "mean revenue per row" in prompt else "sum"
pivot = sales.pivot_table(index="month", columns="category", values="revenue", aggfunc=aggfunc)

if m := re.search(r'cell for month (\d{4}-\d{2}), category "([^"]+)"', prompt):
    value = pivot.loc[m.group(1), m.group(2)]
elif m := re.search(r"row for month (\d{4}-\d{2})", prompt):
    value = pivot.loc[m.group(1)].sum()
else:
    category = re.search(r'column for category "([^"]+)"', prompt).group(1)
    value = pivot[category].sum()
print(f"{value:.2f}")
