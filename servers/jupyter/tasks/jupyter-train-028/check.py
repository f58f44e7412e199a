import collections
import csv

t = collections.defaultdict(float)
for r in csv.DictReader(open(os.path.join(ORIGINAL, "sales.csv"))):
    t[r["region"]] += int(r["units"]) * float(r["unit_price"])
try:
    rows = list(csv.reader(open("region_totals.csv", newline="")))
except OSError:
    rows = None
if not rows or [c.strip().lower() for c in rows[0]] != ["region", "revenue"]:
    print("FAIL: missing file or wrong header")
elif [r[0] for r in rows[1:] if r] != sorted(t):
    print("FAIL: regions missing or not sorted")
elif all(abs(float(r[1]) - t[r[0]]) <= 0.01 for r in rows[1:] if r):
    print("PASS")
else:
    print("FAIL: wrong revenue")
