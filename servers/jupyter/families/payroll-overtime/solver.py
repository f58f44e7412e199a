import json
import re
import sqlite3

import pandas as pd


def hours(value):
    """An hour count: a number, or text such as "7h30" or "8h"."""
    if isinstance(value, (int, float)):
        return float(value)
    m = re.fullmatch(r"\s*(\d+)h(\d*)\s*", value)
    if m:
        return int(m.group(1)) + int(m.group(2) or 0) / 60
    return float(value)


staff = pd.read_csv("employees.csv", dtype=str)
staff["emp_id"] = staff["emp_id"].str.strip().str.upper()
staff["rate"] = staff["hourly_rate"].astype(float)

rows = []
with open("timesheets.jsonl") as f:
    for line in f:
        if line.strip():
            record = json.loads(line)
            rows.append(
                {
                    "emp_id": record["emp_id"].strip().upper(),
                    "week_start": record["week_start"],
                    "total": sum(hours(h) for h in record["hours"]),
                }
            )
weeks = pd.DataFrame(rows).drop_duplicates(subset=["emp_id", "week_start"])
weeks = weeks.merge(staff[["emp_id", "department", "rate", "currency"]], on="emp_id")

with sqlite3.connect("rates.db") as db:
    departments = pd.read_sql_query("SELECT * FROM departments", db)
    fx = pd.read_sql_query("SELECT * FROM fx", db)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    transfers = pd.read_sql_query("SELECT * FROM transfers", db) if "transfers" in tables else None

# The department in force on each week's start date.
if transfers is not None and len(transfers):
    transfers = transfers.merge(
        departments[["id", "name"]], left_on="department_id", right_on="id"
    ).sort_values("effective_date")

    def department(row):
        moves = transfers[
            (transfers["emp_id"] == row["emp_id"])
            & (transfers["effective_date"] <= row["week_start"])
        ]
        return moves["name"].iloc[-1] if len(moves) else row["department"]

    weeks["department"] = weeks.apply(department, axis=1)

weeks["month"] = weeks["week_start"].str[:7]
weeks = weeks.merge(fx, on="month", how="left")
weeks["usd_rate"] = weeks["rate"] * weeks["usd_per_eur"].where(weeks["currency"] == "EUR", 1.0)
weeks = weeks.merge(
    departments[["name", "overtime_multiplier"]], left_on="department", right_on="name"
)
weeks["overtime"] = (weeks["total"] - 40).clip(lower=0)
weeks["overtime_pay"] = weeks["overtime"] * weeks["usd_rate"] * weeks["overtime_multiplier"]
weeks["pay"] = weeks["total"].clip(upper=40) * weeks["usd_rate"] + weeks["overtime_pay"]

m = re.search(r"the (\w+) department in (\w+) 2024", PROMPT)
name, month_name = m.group(1), m.group(2)
month = f"2024-{pd.to_datetime(f'1 {month_name} 2024', format='%d %B %Y').month:02}"
chosen = weeks[(weeks["department"] == name) & (weeks["month"] == month)]

if "How many overtime hours" in PROMPT:
    value = chosen["overtime"].sum()
elif "What percentage" in PROMPT:
    value = 100 * chosen["overtime_pay"].sum() / chosen["pay"].sum()
elif "exceed that of the" in PROMPT:
    other = re.search(r"exceed that of the (\w+) department", PROMPT).group(1)
    others = weeks[(weeks["department"] == other) & (weeks["month"] == month)]
    value = chosen["overtime_pay"].sum() - others["overtime_pay"].sum()
elif "one employee" in PROMPT:
    value = chosen.groupby("emp_id")["overtime_pay"].sum().max()
else:
    value = chosen["overtime_pay"].sum()
print(f"{value:.2f}")
