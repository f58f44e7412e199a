R = rng(47)
with open("transactions.jsonl", "w") as f:
    for _ in range(500):
        rec = {
            "account": f"ACC-{R.randint(1, 40):03d}",
            "kind": R.choice(["credit", "debit", "credit"]),
            "amount": round(R.uniform(1, 500), 2),
        }
        f.write(json.dumps(rec) + "\n")
