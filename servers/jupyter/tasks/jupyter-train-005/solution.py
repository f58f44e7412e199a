import collections
import csv

country = {r["customer_id"]: r["country"] for r in csv.DictReader(open("customers.csv"))}
c = collections.Counter()
for r in csv.DictReader(open("orders.csv")):
    c[country[r["customer_id"]]] += float(r["amount"])
print(c.most_common(1)[0][0])
