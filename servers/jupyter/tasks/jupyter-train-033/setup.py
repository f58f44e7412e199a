R = rng(163)
base = [(f"Name {i}", f"user{i}@example.com", f"+1-555-{R.randint(1000, 9999)}") for i in range(50)]
rows = []
for _ in range(90):
    n, e, p = R.choice(base)
    if R.random() < 0.3:
        e = e.upper()
    if R.random() < 0.2:
        e = " " + e + " "
    rows.append([n, e, p])
with open("contacts.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["name", "email", "phone"])
    w.writerows(rows)
