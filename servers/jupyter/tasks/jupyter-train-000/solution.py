import csv

rows = list(csv.DictReader(open("sales.csv")))
print(
    f"{sum(int(r['units']) * float(r['unit_price']) for r in rows if r['region'] == 'North'):.2f}"
)
