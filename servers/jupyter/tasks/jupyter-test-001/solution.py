import json
import statistics

e = json.load(open("employees.json"))["employees"]
avg = {
    d: statistics.mean([p["salary"] for p in e if p["dept"] == d]) for d in {p["dept"] for p in e}
}
print(sum(1 for p in e if p["start_year"] < 2015 and p["salary"] > avg[p["dept"]]))
