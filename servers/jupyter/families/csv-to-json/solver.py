import json
import os
import re

import pandas as pd

prompt = PROMPT
source = re.search(r"The file (\S+) in your home directory", prompt).group(1)
output = re.search(r"Write the file (\S+) in your home directory", prompt).group(1)
table = pd.read_csv(source, keep_default_na=False, dtype=str)

if "one object per row" in prompt:
    result = [
        {
            "order_id": int(r.order_id),
            "customer": r.customer,
            "city": r.city,
            "quantity": int(r.quantity),
            "price": float(r.price),
            "shipped": r.shipped == "yes",
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
