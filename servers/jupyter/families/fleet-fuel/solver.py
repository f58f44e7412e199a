import re
import sqlite3

import pandas as pd

# The families test's skipped-step check sets SKIP to the cleaning steps to leave out, to show
# that the answer needs them; the reference does every step.
SKIP: set[str] = globals().get("SKIP", set())
LITRES_PER_GALLON = 3.785411784
KM_PER_MILE = 1.609344

with sqlite3.connect("fleet.db") as db:
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "types" in tables:
        query = (
            "SELECT v.vehicle_id, t.name AS type, v.odometer_unit "
            "FROM vehicles v JOIN types t ON t.id = v.type_id"
        )
    else:
        query = "SELECT vehicle_id, type, odometer_unit FROM vehicles"
    vehicles = pd.read_sql_query(query, db)

sheets = pd.read_excel("odometer.xlsx", sheet_name=0 if "sheets" in SKIP else None)
readings = pd.concat(sheets.values()) if isinstance(sheets, dict) else sheets
readings["date"] = pd.to_datetime(readings["date"]).dt.strftime("%Y-%m-%d")

fuel = pd.read_csv("fuel.csv", dtype=str)
if "duplicates" not in SKIP:
    fuel = fuel.drop_duplicates(subset="purchase_id")
if "ids" not in SKIP:
    fuel["vehicle_id"] = fuel["vehicle_id"].str.strip().str.upper()
gallons = (fuel["unit"] == "gal") & ("gallons" not in SKIP)
fuel["litres"] = fuel["volume"].astype(float) * gallons.map({True: LITRES_PER_GALLON, False: 1.0})
fuel["dollars"] = fuel["price"].str.replace("$", "").str.replace(",", ".").astype(float)

start, end = re.search(r"readings of (\d{4}-\d\d-\d\d) and (\d{4}-\d\d-\d\d)", PROMPT).groups()
if "period" not in SKIP:
    # ISO dates compare as text.
    fuel = fuel[(fuel["date"] > start) & (fuel["date"] <= end)]

by_date = readings.pivot_table(index="vehicle_id", columns="date", values="reading")
distance = (by_date[end] - by_date[start]).rename("distance").reset_index()
usage = vehicles.merge(distance, on="vehicle_id")
miles = (usage["odometer_unit"] == "mi") & ("miles" not in SKIP)
usage["km"] = usage["distance"] * miles.map({True: KM_PER_MILE, False: 1.0})
bought = fuel.groupby("vehicle_id")[["litres", "dollars"]].sum().reset_index()
usage = usage.merge(bought, on="vehicle_id", how="left").fillna({"litres": 0, "dollars": 0})
usage["per_100"] = 100 * usage["litres"] / usage["km"]


def of_type(name: str, column: str = "litres") -> float:
    """A type's `column` per 100 km: its vehicles' total over their kilometres."""
    rows = usage[usage["type"] == name]
    return 100 * rows[column].sum() / rows["km"].sum()


types = re.findall(r"vehicles of type (\w+)", PROMPT)
if "least efficient" in PROMPT:
    value = usage["per_100"].max()
elif "more the vehicles of type" in PROMPT:
    value = of_type(types[0]) - of_type(types[1])
elif "fuel cost" in PROMPT:
    value = of_type(types[0], "dollars")
elif types:
    value = of_type(types[0])
else:
    vehicle = re.search(r"of vehicle (\S+)", PROMPT).group(1)
    value = usage.loc[usage["vehicle_id"] == vehicle, "per_100"].iloc[0]
print(f"{value:.2f}")
