import json
import statistics

e = json.load(open("employees.json"))["employees"]
print(statistics.median([p["salary"] for p in e if p["dept"] == "Engineering"]))
