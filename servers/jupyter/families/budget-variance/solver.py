import re
import sqlite3

import pandas as pd

# Cleaning steps the family test's naive runs skip: "rates" (every amount taken as dollars) or
# "renames" (old codes left as they are).
SKIP: set[str] = globals().get("SKIP", set())

MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
HEADS = {"cost centre", "cost_center", "cc"}


def month_of(value: object) -> int:
    """The month (1-12) a sheet's month cell names: 2024-03, Mar 2024 or a date."""
    if isinstance(value, pd.Timestamp) or hasattr(value, "month"):
        return value.month
    text = str(value).strip()
    if m := re.fullmatch(r"2024-(\d\d)", text):
        return int(m.group(1))
    return MONTHS.index(text[:3]) + 1


budget_rows = []
for title, sheet in pd.read_excel("budget.xlsx", sheet_name=None, header=None).items():
    first = [str(v).strip().lower() for v in sheet[0]]
    if not HEADS & set(first):
        continue  # the notes sheet
    start = next(i for i, v in enumerate(first) if v in HEADS)
    header = [str(v).strip() for v in sheet.iloc[start]]
    body = sheet.iloc[start + 1 :].dropna(how="all")
    if header[1] in MONTHS:  # wide: a column per month
        for _, row in body.iterrows():
            for j, name in enumerate(header[1:], start=1):
                if pd.notna(row[j]):
                    budget_rows.append((title, row[0], MONTHS.index(name) + 1, float(row[j])))
    else:
        for _, row in body.iterrows():
            budget_rows.append((title, row[0], month_of(row[1]), float(row[2])))
budget = pd.DataFrame(budget_rows, columns=["department", "cost_centre", "month", "budget"])
budget["cost_centre"] = budget["cost_centre"].astype(str).str.strip()
department_of = dict(zip(budget["cost_centre"], budget["department"], strict=False))

renames = pd.read_csv("renamed_cost_centres.csv", dtype=str)
new_code = dict(zip(renames["old_code"].str.strip(), renames["new_code"].str.strip(), strict=True))


def current(code: str) -> str:
    """The code the sheets use for `code`, following renames of renames."""
    while code in new_code and "renames" not in SKIP:
        code = new_code[code]
    return code


ledger = pd.read_csv("ledger.csv", dtype=str).drop_duplicates(subset="entry_id")
ledger["date"] = pd.to_datetime(ledger["date"], format="%Y-%m-%d")
ledger = ledger[ledger["date"].dt.year == 2024].copy()
ledger["month"] = ledger["date"].dt.month
ledger["amount"] = ledger["amount"].str.replace(",", "").astype(float)
ledger["currency"] = ledger["currency"].str.strip().str.upper()
ledger["cost_centre"] = ledger["cost_centre"].str.strip().map(current)
with sqlite3.connect("rates.db") as db:
    rates = pd.read_sql_query("SELECT currency, month, usd_per_unit FROM fx_rates", db)
rates["month"] = rates["month"].str[5:].astype(int)
ledger = ledger.merge(rates, on=["currency", "month"], how="left")
rate = 1.0 if "rates" in SKIP else ledger["usd_per_unit"].where(ledger["currency"] != "USD", 1.0)
ledger["usd"] = ledger["amount"] * rate
ledger["department"] = ledger["cost_centre"].map(department_of)
ledger = ledger[ledger["department"].notna()]

columns = re.search(r"header line is exactly `([^`]+)`", PROMPT).group(1).split(",")
quarter_form = re.search(r"the quarter written as (\S+?),", PROMPT).group(1)
prefix = "2024-" if quarter_form.startswith("2024-") else ""
budget["quarter"] = (budget["month"] - 1) // 3 + 1
ledger["quarter"] = (ledger["month"] - 1) // 3 + 1
planned = budget.groupby(["department", "quarter"])["budget"].sum()
spent = ledger.groupby(["department", "quarter"])["usd"].sum()
report = pd.DataFrame({"budget": planned, "actual": spent}).fillna(0.0).reset_index()
report["variance"] = report["actual"] - report["budget"]
report["percent"] = 100 * report["variance"] / report["budget"]
if "sorted by quarter, then by department" in PROMPT:
    report = report.sort_values(["quarter", "department"])
elif "sorted by variance, the largest first" in PROMPT:
    report = report.sort_values("variance", ascending=False)
else:
    report = report.sort_values(["department", "quarter"])
report["quarter"] = prefix + "Q" + report["quarter"].astype(str)
out = pd.DataFrame(
    {
        columns[0]: report["department"],
        columns[1]: report["quarter"],
        columns[2]: report["budget"].round(2),
        columns[3]: report["actual"].round(2),
        columns[4]: report["variance"].round(2),
    }
)
if len(columns) > 5:
    out[columns[5]] = report["percent"].round(1)
out.to_csv("variance.csv", index=False, float_format="%.2f")
print("done")
