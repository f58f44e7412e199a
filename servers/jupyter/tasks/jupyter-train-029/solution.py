import csv
import json

with open("people.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["name", "age", "city"])
    for p in json.load(open("people.json")):
        w.writerow([p["name"], p["age"], p["city"]])
print("/home/user/people.csv")
