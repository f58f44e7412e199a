import re
import sqlite3

import pandas as pd

north = pd.read_csv("north_sales.csv", dtype=str)
north = pd.DataFrame(
    {
        "txn": north["txn_id"],
        "date": pd.to_datetime(north["date"], format="%Y-%m-%d"),
        "sku": north["sku"],
        "qty": north["qty"].astype(int),
        "price_cents": (north["price"].str.lstrip("$").astype(float) * 100).round().astype(int),
        "store": "north",
    }
)
south = pd.read_csv("south_sales.csv", sep=";", dtype=str)
south = pd.DataFrame(
    {
        "txn": south["Transaction"],
        "date": pd.to_datetime(south["Sale Date"], format="%d/%m/%Y"),
        "sku": south["SKU"],
        "qty": south["Quantity"].astype(int),
        "price_cents": south["Unit Price (cents)"].astype(int),
        "store": "south",
    }
)
sales = pd.concat([north, south]).drop_duplicates(subset="txn")
# Cleaned as the hard level's prompt says; a no-op on clean files.
sales["sku"] = sales["sku"].str.strip().str.upper()

with sqlite3.connect("catalog.db") as db:
    catalog = pd.read_sql_query(
        "SELECT p.sku, p.unit_cost_cents, c.name AS category "
        "FROM products p JOIN categories c ON c.id = p.category_id",
        db,
    )
sales = sales.merge(catalog, on="sku", how="inner")

category = re.search(r"the (\w+) category", PROMPT).group(1)
month = re.search(r"category in (\w+) 2024", PROMPT).group(1)
month_number = pd.to_datetime(f"1 {month} 2024", format="%d %B %Y").month
rows = sales[
    (sales["category"] == category)
    & (sales["date"].dt.year == 2024)
    & (sales["date"].dt.month == month_number)
]
revenue = rows["qty"] * rows["price_cents"]
margin = rows["qty"] * (rows["price_cents"] - rows["unit_cost_cents"])

if "as a percentage" in PROMPT:
    value = 100 * margin.sum() / revenue.sum()
elif "north store's gross margin" in PROMPT:
    by_store = margin.groupby(rows["store"]).sum()
    value = (by_store.get("north", 0) - by_store.get("south", 0)) / 100
else:
    value = margin.sum() / 100
print(f"{value:.2f}")
