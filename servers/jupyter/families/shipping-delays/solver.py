import json
import os
import re
import sqlite3

import pandas as pd

# Cleaning steps the family test's naive runs skip: "zones" (shipped_at read as UTC) and
# "repeats" (a repeated event counted each time).
SKIP: set[str] = globals().get("SKIP", set())

web = pd.read_csv("orders.csv", dtype=str)
parts = [web.assign(shipped=pd.to_datetime(web["shipped_at"], format="%Y-%m-%d %H:%M"))]
if os.path.exists("orders_phone.csv"):
    phone = pd.read_csv("orders_phone.csv", sep=";", dtype=str).rename(
        columns={
            "Order": "order_id",
            "Region": "region",
            "Carrier code": "carrier",
            "Service level": "service",
            "Time zone": "tz",
        }
    )
    phone["shipped"] = pd.to_datetime(phone["Shipped (local)"], format="%d/%m/%Y %H:%M")
    parts.append(phone)
orders = pd.concat(parts)[["order_id", "region", "carrier", "service", "shipped", "tz"]]
orders = orders.drop_duplicates(subset="order_id")
orders["carrier"] = orders["carrier"].str.strip().str.upper()
orders["service"] = orders["service"].str.strip().str.lower()
if "zones" in SKIP:
    orders["shipped_utc"] = orders["shipped"]
else:
    orders["shipped_utc"] = [
        t.tz_localize(zone).tz_convert("UTC").tz_localize(None)
        for t, zone in zip(orders["shipped"], orders["tz"], strict=True)
    ]

with sqlite3.connect("carriers.db") as db:
    carriers = pd.read_sql_query("SELECT code AS carrier, name FROM carriers", db)
    promises = pd.read_sql_query("SELECT carrier_code AS carrier, service, hours FROM promises", db)
orders = orders.merge(carriers, on="carrier").merge(promises, on=["carrier", "service"])

with open("tracking.json") as f:
    tracking = json.load(f)
events = pd.DataFrame(
    [
        {"order_id": s["order_id"], "status": e["status"], "time": e["time"]}
        for s in tracking
        for e in s["events"]
    ]
)
if "repeats" not in SKIP:
    events = events.drop_duplicates()
events["time"] = pd.to_datetime(events["time"], utc=True).dt.tz_localize(None)
delivered = events[events["status"] == "delivered"].groupby("order_id")["time"].min()
attempts = events[events["status"] == "failed_attempt"].groupby("order_id").size()
orders["delivered"] = orders["order_id"].map(delivered)
orders["attempts"] = orders["order_id"].map(attempts).fillna(0).astype(int)
orders["hours_over"] = (
    orders["delivered"] - orders["shipped_utc"]
).dt.total_seconds() / 3600 - orders["hours"]
deliveries = orders[orders["delivered"].notna()].copy()
deliveries["late"] = deliveries["hours_over"] > 0


def scope(frame: pd.DataFrame) -> pd.DataFrame:
    m = re.search(
        r"carrier ([A-Z][A-Za-z ]+?)'s (?:late )?(?:deliveries|shipments) to the (\w+) region",
        PROMPT,
    )
    return frame[(frame["name"] == m.group(1)) & (frame["region"] == m.group(2))]


if "highest share of late deliveries" in PROMPT:
    service = re.search(r"late deliveries on the (\w+) service", PROMPT).group(1)
    shares = deliveries[deliveries["service"] == service].groupby("name")["late"].mean()
    print(shares.idxmax())
elif "that were late" in PROMPT:
    print(f"{100 * scope(deliveries)['late'].mean():.1f}")
elif "hours past the promise" in PROMPT:
    rows = scope(deliveries)
    print(f"{rows.loc[rows['late'], 'hours_over'].mean():.2f}")
else:
    print(int(scope(orders)["attempts"].sum()))
