import pandas as pd

customers = pd.read_csv("customers.csv")
transactions = pd.read_csv("transactions.csv")
refunds = pd.read_json("refunds.json", dtype={"txn_id": str, "amount": float})

refunded = refunds.groupby("txn_id")["amount"].sum() if len(refunds) else pd.Series(dtype=float)
transactions["refunded"] = transactions["txn_id"].map(refunded).fillna(0.0)
transactions["net"] = transactions["amount"] - transactions["refunded"]
net = transactions.groupby("customer_id")["net"].sum().sort_values(ascending=False)
top = net.index[0]

if "customer_id." in PROMPT:
    print(top)
elif "its name" in PROMPT:
    print(customers.set_index("customer_id").loc[top, "name"])
elif "exceed the second" in PROMPT:
    print(f"{net.iloc[0] - net.iloc[1]:.2f}")
else:
    print(f"{net.iloc[0]:.2f}")
