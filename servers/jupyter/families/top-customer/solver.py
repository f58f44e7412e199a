import json
import re
from pathlib import Path

import pandas as pd

prompt: str = PROMPT
customers = pd.read_csv("customers.csv", dtype=str)
transactions = pd.read_csv("transactions.csv", dtype={"txn_id": str, "customer_id": str})
transactions = transactions.drop_duplicates(subset="txn_id")
transactions["customer_id"] = transactions["customer_id"].str.strip().str.upper()

records = json.loads(Path("refunds.json").read_text())
if Path("refunds_late.jsonl").exists():
    lines = Path("refunds_late.jsonl").read_text().splitlines()
    records += [json.loads(line) for line in lines if line.strip()]
refunds = pd.DataFrame(records, columns=["refund_id", "txn_id", "amount"])
refunded = refunds.groupby("txn_id")["amount"].sum()
transactions["refunded"] = transactions["txn_id"].map(refunded).fillna(0.0)
transactions["net"] = transactions["amount"] - transactions["refunded"]
if "currency" in transactions.columns:
    rate = float(re.search(r"1 EUR = ([\d.]+) USD", prompt).group(1))
    euros = transactions["currency"] == "EUR"
    transactions.loc[euros, "net"] = transactions.loc[euros, "net"] * rate
net = transactions.groupby("customer_id")["net"].sum().sort_values(ascending=False)
top = net.index[0]

if "its customer_id" in prompt:
    print(top)
elif "exceeds the second" in prompt:
    print(f"{net.iloc[0] - net.iloc[1]:.2f}")
elif "highest net revenue of any customer" in prompt:
    print(f"{net.iloc[0]:.2f}")
else:
    print(customers.set_index("customer_id").loc[top, "name"])
