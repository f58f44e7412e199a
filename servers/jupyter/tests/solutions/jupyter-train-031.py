import json
v = [float(l) for l in open("values.txt") if l.strip()]
json.dump({"count": len(v), "mean": sum(v) / len(v), "max": max(v)}, open("summary.json", "w"))
print("/home/user/summary.json")
