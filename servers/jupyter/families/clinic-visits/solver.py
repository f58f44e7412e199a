import json
import re
import sqlite3

import pandas as pd

# The families test's skipped-step check sets SKIP to the cleaning steps to leave out, to show
# that the answer needs them; the reference does every step.
SKIP: set[str] = globals().get("SKIP", set())

patients = pd.read_csv("patients.csv", dtype=str)
patients["birth_date"] = pd.to_datetime(patients["birth_date"], format="%Y-%m-%d")

records = []
with open("visits.jsonl") as f:
    for line in f:
        if line.strip():
            record = json.loads(line)
            patient = record.get("patient")
            if patient is None and "pid" not in SKIP:
                patient = record.get("pid")
            records.append(
                {
                    "visit_id": record["visit_id"],
                    "patient_id": patient,
                    "date": record["date"],
                    "code": record["code"],
                    "status": record.get("status", "completed"),
                }
            )
visits = pd.DataFrame(records)
if "duplicates" not in SKIP:
    visits = visits.drop_duplicates(subset="visit_id")
iso = pd.to_datetime(visits["date"], format="%Y-%m-%d", errors="coerce")
day_first = pd.to_datetime(visits["date"], format="%d/%m/%Y", errors="coerce")
visits["date"] = iso if "dates" in SKIP else iso.fillna(day_first)
visits = visits.dropna(subset=["date", "patient_id"])
if "codes" not in SKIP:
    visits["code"] = visits["code"].str.strip().str.upper()
if "cancelled" not in SKIP:
    visits = visits[visits["status"] != "cancelled"]
visits = visits.merge(patients, on="patient_id")

with sqlite3.connect("billing.db") as db:
    prices = pd.read_sql_query("SELECT code, valid_from, price_cents FROM prices", db)
prices["valid_from"] = pd.to_datetime(prices["valid_from"], format="%Y-%m-%d")
if "prices" in SKIP:
    latest = prices.sort_values("valid_from").groupby("code").tail(1)
    visits = visits.merge(latest[["code", "price_cents"]], on="code")
else:
    # The price in force on the visit's day: the code's last price from that day or before.
    visits = pd.merge_asof(
        visits.sort_values("date"),
        prices.sort_values("valid_from"),
        left_on="date",
        right_on="valid_from",
        by="code",
    ).dropna(subset=["price_cents"])
visits["quarter"] = visits["date"].dt.year.astype(str) + "Q" + visits["date"].dt.quarter.astype(str)

question = PROMPT.split("(Q1 is January to March).")[1]
quarters = [f"{year}Q{q}" for q, year in re.findall(r"Q(\d) (\d{4})", question)]


def billed(rows: pd.DataFrame) -> float:
    """The dollars billed for `rows`."""
    return rows["price_cents"].sum() / 100


def aged_rows() -> pd.DataFrame:
    """The question's clinic's visits in its quarter by patients old enough on its first day."""
    clinic = re.search(r"the ([A-Z]\w+) clinic", question).group(1)
    age = int(re.search(r"aged (\d+) or over", question).group(1))
    start = pd.Period(quarters[0], freq="Q").start_time
    birth = visits["birth_date"]
    before = (birth.dt.month > start.month) | (
        (birth.dt.month == start.month) & (birth.dt.day > start.day)
    )
    years = start.year - birth.dt.year - before.astype(int)
    return visits[
        (visits["clinic"] == clinic) & (visits["quarter"] == quarters[0]) & (years >= age)
    ]


if "percentage change" in question:
    clinic = re.search(r"the ([A-Z]\w+) clinic", question).group(1)
    rows = visits[visits["clinic"] == clinic]
    before, after = (billed(rows[rows["quarter"] == q]) for q in quarters)
    value = 100 * (after - before) / before
elif "grew the most" in question:
    by_quarter = visits.groupby(["clinic", "quarter"])["price_cents"].sum().unstack(fill_value=0)
    value = (by_quarter[quarters[1]] - by_quarter[quarters[0]]).max() / 100
elif "per visit" in question:
    rows = aged_rows()
    value = billed(rows) / len(rows)
else:
    value = billed(aged_rows())
print(f"{value:.2f}")
