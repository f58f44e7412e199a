import collections
import csv

s = collections.defaultdict(list)
for r in csv.DictReader(open("sensor.csv")):
    s[int(r["timestamp"][11:13])].append(float(r["reading"]))
print(max(s, key=lambda h: sum(s[h]) / len(s[h])))
