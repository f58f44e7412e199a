import collections
import csv

c = collections.Counter()
for r in csv.DictReader(open("sales.csv")):
    c[int(r["date"][5:7])] += int(r["units"]) * float(r["unit_price"])
print(c.most_common(1)[0][0])
