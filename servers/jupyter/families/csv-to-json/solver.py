import json
import os
import re

import pandas as pd

prompt = PROMPT
source = re.search(r"the file (\S+?)[ ,]", prompt, re.IGNORECASE).group(1)
output = re.search(r"Write the file (\S+) in your home directory", prompt).group(1)
table = pd.read_csv(source, keep_default_na=False, dtype=str, encoding="utf-8-sig")
# Spaces around a value are not part of it; an order listed twice counts once, at its first row.
table = table.apply(lambda column: column.str.strip())
table = table.drop_duplicates(subset="order_id", keep="first")
table["price"] = table["price"].str.lstrip("$")
table["shipped"] = table["shipped"].str.lower().isin(["yes", "y"])

if "one object per row" in prompt:
    result = [
        {
            "order_id": int(r.order_id),
            "customer": r.customer,
            "city": r.city,
            "quantity": int(r.quantity),
            "price": float(r.price),
            "shipped": bool(r.shipped),
            "coupon": r.coupon or None,
        }
        for r in table.itertuples()
    ]
elif m := re.search(r"one key per distinct (\w+) value", prompt):
    column = m.group(1)
    result = {}
    for r in table.itertuples():
        result.setdefault(getattr(r, column), []).append(int(r.order_id))
    result = {k: sorted(v) for k, v in result.items()}
else:
    table["amount"] = table["quantity"].astype(int) * table["price"].astype(float)
    result = {
        name: {"orders": int(len(group)), "total": round(float(group["amount"].sum()), 2)}
        for name, group in table.groupby("customer")
    }

os.makedirs(os.path.dirname(output) or ".", exist_ok=True)
with open(output, "w") as f:
    json.dump(result, f, indent=2)
print("done")
