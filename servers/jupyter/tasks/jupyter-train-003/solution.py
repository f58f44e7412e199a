import csv

v = [
    float(r["temp_c"])
    for r in csv.DictReader(open("temperatures.csv"))
    if r["city"] == "Oslo" and r["temp_c"]
]
print(f"{sum(v) / len(v):.2f}")
