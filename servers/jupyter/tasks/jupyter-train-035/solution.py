import collections
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

c = collections.Counter()
for r in csv.DictReader(open("sales.csv")):
    c[r["product"]] += int(r["units"])
plt.figure(figsize=(6, 4), dpi=100)
plt.bar(list(c), list(c.values()))
plt.savefig("units.png")
print("/home/user/units.png")
