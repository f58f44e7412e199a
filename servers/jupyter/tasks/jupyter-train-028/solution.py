import collections
import csv

t = collections.defaultdict(float)
for r in csv.DictReader(open("sales.csv")):
    t[r["region"]] += int(r["units"]) * float(r["unit_price"])
with open("region_totals.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["region", "revenue"])
    for k in sorted(t):
        w.writerow([k, f"{t[k]:.2f}"])
print("/home/user/region_totals.csv")
