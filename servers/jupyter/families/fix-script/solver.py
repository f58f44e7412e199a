import re

source = open("report.py").read()
docstring = source.split('"""')[1]
inp = re.search(r"Reads (\S+?),? ", docstring).group(1)
out = re.search(r"[Ww]rites\s+(\S+?):", docstring).group(1)

if docstring.startswith("Totals per customer"):
    amount = re.search(r"columns \w+,customer,(\w+);", docstring).group(1)
    fixed = f'''import csv

totals = {{}}
counts = {{}}
with open("{inp}", newline="") as f:
    for row in csv.DictReader(f):
        name = row["customer"]
        totals[name] = totals.get(name, 0.0) + float(row["{amount}"])
        counts[name] = counts.get(name, 0) + 1
with open("{out}", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["customer", "orders", "total"])
    for name in sorted(totals):
        writer.writerow([name, counts[name], f"{{totals[name]:.2f}}"])
'''
elif docstring.startswith("Log summary"):
    fixed = f'''import json

total = 0
counts = {{}}
errors = []
with open("{inp}") as f:
    for line in f:
        line = line.rstrip("\\n")
        if not line.strip():
            continue
        total += 1
        _date, _time, level, message = line.split(" ", 3)
        counts[level] = counts.get(level, 0) + 1
        if level == "ERROR":
            errors.append(message)
with open("{out}", "w") as f:
    json.dump({{"total": total, "by_level": counts, "errors": errors}}, f)
'''
else:
    fixed = f'''rows = []
with open("{inp}") as f:
    for line in f:
        if line.strip():
            name, score = line.split()
            rows.append((name, int(score)))
rows.sort(key=lambda r: (-r[1], r[0]))
with open("{out}", "w") as f:
    for rank, (name, score) in enumerate(rows, 1):
        f.write(f"{{rank}}. {{name}} {{score}}\\n")
'''
with open("report.py", "w") as f:
    f.write(fixed)
print("done")
