R = rng(5)
cities = {"Oslo": 4.0, "Lima": 19.0, "Cairo": 24.0, "Perth": 17.0}
with open("temperatures.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["city", "day", "temp_c"])
    for day in range(1, 61):
        for city, mean in cities.items():
            t = "" if R.random() < 0.15 else f"{mean + R.uniform(-6, 6):.1f}"
            w.writerow([city, day, t])
