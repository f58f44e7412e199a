import csv
import statistics

rows = list(csv.DictReader(open("measurements.csv")))
print(max(rows[0], key=lambda c: statistics.pstdev([float(r[c]) for r in rows])))
