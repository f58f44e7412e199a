import json
import re
import sqlite3

import pandas as pd

m = re.search(r"at the end of (\d{4}-\d\d-\d\d)\. receipts", PROMPT)
opening_date = m.group(1)
as_of = re.search(r'"as_of" \(the string "([\d-]+)"\)', PROMPT).group(1)

with sqlite3.connect("stock.db") as db:
    warehouses = pd.read_sql_query("SELECT * FROM warehouses", db)
    products = pd.read_sql_query("SELECT * FROM products", db)
    opening = pd.read_sql_query("SELECT * FROM opening_stock", db)

warehouses["key"] = warehouses["name"].str.strip().str.lower()
receipts = pd.read_csv("receipts.csv", dtype=str).drop_duplicates(subset="receipt_id")
receipts["key"] = receipts["warehouse"].str.strip().str.lower()
receipts["sku"] = receipts["sku"].str.strip().str.upper()
receipts = receipts.merge(warehouses[["id", "key"]], on="key").merge(
    products[["sku", "items_per_box"]], on="sku"
)
receipts["items"] = receipts["quantity"].astype(int) * receipts["items_per_box"].where(
    receipts["unit"].str.strip().str.lower() == "box", 1
)
moves = [
    pd.DataFrame(
        {
            "warehouse_id": receipts["id"],
            "sku": receipts["sku"],
            "date": receipts["date"],
            "items": receipts["items"],
        }
    )
]

with open("shipments.json") as f:
    shipments = json.load(f)
lines = [
    {
        "warehouse_id": s["warehouse_id"],
        "sku": line["sku"].strip().upper(),
        "date": s["date"],
        "items": -int(line["items"]),
    }
    for s in shipments
    if s.get("status", "shipped") != "cancelled"
    for line in s["lines"]
]
moves.append(pd.DataFrame(lines, columns=["warehouse_id", "sku", "date", "items"]))
moves = pd.concat(moves)
moves = moves[(moves["date"] > opening_date) & (moves["date"] <= as_of)]

days = pd.date_range(pd.Timestamp(opening_date) + pd.Timedelta(days=1), as_of).strftime("%Y-%m-%d")
detail = re.search(r'included\), "(\w+)" \(', PROMPT).group(1)
values = '"value" (the value of that warehouse' in PROMPT
report = {"as_of": as_of, "warehouses": [], "total_value": 0.0}
total_cents = 0
for _, w in warehouses.sort_values("name").iterrows():
    closing, ran_out, below, shipped = {}, [], [], {}
    cents = 0
    for _, p in products.sort_values("sku").iterrows():
        start = opening[(opening["warehouse_id"] == w["id"]) & (opening["sku"] == p["sku"])]
        level = int(start["qty"].sum())
        mine = moves[(moves["warehouse_id"] == w["id"]) & (moves["sku"] == p["sku"])]
        by_day = mine.groupby("date")["items"].sum()
        out = False
        for day in days:
            level += int(by_day.get(day, 0))
            out |= level == 0
        closing[p["sku"]] = level
        cents += level * int(p["unit_value_cents"])
        if out:
            ran_out.append(p["sku"])
        if level < p["reorder_level"]:
            below.append(p["sku"])
        shipped[p["sku"]] = int(-mine.loc[mine["items"] < 0, "items"].sum())
    entry = {"name": w["name"], "closing_stock": closing}
    entry[detail] = {"stockouts": ran_out, "below_reorder": below, "shipped": shipped}[detail]
    if values:
        entry["value"] = round(cents / 100, 2)
    report["warehouses"].append(entry)
    total_cents += cents
report["total_value"] = round(total_cents / 100, 2)

with open("report.json", "w") as f:
    json.dump(report, f, indent=2)
print("done")
