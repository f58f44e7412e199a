import re
from pathlib import Path

import pandas as pd

prompt: str = PROMPT


def clean_name(text: object) -> str:
    """A name as the untidy export writes it, trimmed and in lower case."""
    return str(text).strip().lower()


def money(text: object) -> float:
    """A price such as 12.50 or "$1,234.50" as a number."""
    return float(str(text).replace("$", "").replace(",", "").strip())


sales = pd.read_csv("sales.csv", dtype=str, keep_default_na=False)
if "sale_id" in sales.columns:
    sales = sales.drop_duplicates(subset="sale_id")
    sales = sales[sales["status"].str.strip().str.lower() != "cancelled"]
if Path("stores.csv").exists():
    stores = pd.read_csv("stores.csv", dtype=str)
    sales = sales.merge(stores, on="store", how="left")
sales["region"] = sales["region"].map(clean_name)
sales["product"] = sales["product"].map(clean_name)
sales["revenue"] = sales["units"].astype(float) * sales["unit_price"].map(money)

rows = sales
if m := re.search(r"(?:of|in) the (\S+) region", prompt):
    rows = rows[rows["region"] == m.group(1).lower()]
if m := re.search(r'the product "([^"]+)"', prompt):
    rows = rows[rows["product"] == m.group(1).lower()]
if m := re.search(r"the month (\d{4}-\d{2})", prompt):
    rows = rows[rows["date"].str.startswith(m.group(1))]
print(f"{rows['revenue'].sum():.2f}")
