R = rng(31)
countries = ["Norway", "Chile", "Japan", "Kenya", "Canada"]
with open("customers.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["customer_id", "name", "country"])
    for i in range(1, 61):
        w.writerow([f"C{i:03d}", f"Customer {i}", R.choice(countries)])
with open("orders.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["order_id", "customer_id", "amount"])
    for i in range(1, 301):
        w.writerow([i, f"C{R.randint(1, 60):03d}", f"{R.uniform(5, 180):.2f}"])
