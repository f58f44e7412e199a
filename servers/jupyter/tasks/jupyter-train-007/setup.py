import math

R = rng(61)
with open("sensor.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["timestamp", "reading"])
    for day in range(1, 15):
        for minute in range(0, 24 * 60, 20):
            h = minute / 60
            v = 50 + 20 * math.sin((h - 11.3) / 24 * 2 * math.pi + math.pi / 2) + R.uniform(-8, 8)
            w.writerow([f"2024-05-{day:02d}T{minute // 60:02d}:{minute % 60:02d}:00", f"{v:.3f}"])
