R = rng(11)
regions = ["North", "South", "East", "West"]
products = ["anvil", "bracket", "cog", "dowel", "eyelet"]
with open("sales.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["date", "region", "product", "units", "unit_price"])
    for i in range(240):
        day = 1 + i % 28
        month = 1 + (i // 28) % 12
        w.writerow(
            [
                f"2024-{month:02d}-{day:02d}",
                R.choice(regions),
                R.choice(products),
                R.randint(1, 40),
                f"{R.uniform(2, 30):.2f}",
            ]
        )
