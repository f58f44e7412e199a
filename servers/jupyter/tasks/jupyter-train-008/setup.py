R = rng(67)
inv = {}
for wh in "ABC":
    inv[wh] = [
        {"sku": f"{wh}-{i:04d}", "qty": R.randint(0, 50), "price": round(R.uniform(0.5, 99), 2)}
        for i in range(R.randint(20, 40))
    ]
with open("inventory.json", "w") as f:
    json.dump({"warehouses": inv}, f)
