import csv
import gzip

v = [
    int(r["duration_ms"])
    for r in csv.DictReader(gzip.open("events.csv.gz", "rt"))
    if r["event"] == "checkout"
]
print(f"{sum(v) / len(v):.1f}")
