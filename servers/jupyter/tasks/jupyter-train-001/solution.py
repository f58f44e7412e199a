import collections
import csv

c = collections.Counter()
for r in csv.DictReader(open("sales.csv")):
    c[r["product"]] += int(r["units"])
print(c.most_common(1)[0][0])
