R = rng(59)
with open("grades.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["student", "test1", "test2", "test3"])
    for i in range(150):
        skill = R.randint(40, 95)
        w.writerow([f"s{i:03d}"] + [max(0, min(100, skill + R.randint(-15, 15))) for _ in range(3)])
