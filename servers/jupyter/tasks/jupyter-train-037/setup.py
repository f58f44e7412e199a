R = rng(179)
with open("matrix.csv", "w", newline="") as f:
    w = csv.writer(f)
    for _ in range(6):
        w.writerow([R.randint(-9, 9) for _ in range(6)])
