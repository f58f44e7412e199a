import csv
import json

want = [
    [p["name"], str(p["age"]), p["city"]]
    for p in json.load(open(os.path.join(ORIGINAL, "people.json")))
]
try:
    rows = [r for r in csv.reader(open("people.csv", newline="")) if r]
except OSError:
    rows = []
print("PASS" if rows and rows[0] == ["name", "age", "city"] and rows[1:] == want else "FAIL")
