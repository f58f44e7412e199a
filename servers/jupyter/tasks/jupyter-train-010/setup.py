R = rng(79)
spreads = {"alpha": 3.0, "beta": 7.5, "gamma": 7.1, "delta": 5.0}
with open("measurements.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(list(spreads))
    for _ in range(300):
        w.writerow([f"{100 + R.uniform(-s, s) * 1.7:.3f}" for s in spreads.values()])
