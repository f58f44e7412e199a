R = rng(71)
with open("survey.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["respondent", "hours_online", "wellbeing"])
    for i in range(200):
        h = R.uniform(0, 12)
        w.writerow([i, f"{h:.2f}", f"{70 - 2.5 * h + R.uniform(-15, 15):.2f}"])
