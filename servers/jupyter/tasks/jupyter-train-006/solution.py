import collections
import json

b = collections.Counter()
for line in open("transactions.jsonl"):
    r = json.loads(line)
    b[r["account"]] += r["amount"] if r["kind"] == "credit" else -r["amount"]
print(max(b, key=b.get))
