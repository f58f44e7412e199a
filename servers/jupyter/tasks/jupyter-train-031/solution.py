import json

v = [float(line) for line in open("values.txt") if line.strip()]
json.dump({"count": len(v), "mean": sum(v) / len(v), "max": max(v)}, open("summary.json", "w"))
print("/home/user/summary.json")
