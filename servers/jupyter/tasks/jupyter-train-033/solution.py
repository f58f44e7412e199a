import csv

rows = list(csv.reader(open("contacts.csv", newline="")))
seen, out = set(), [rows[0]]
for r in rows[1:]:
    k = r[1].strip().lower()
    if k not in seen:
        seen.add(k)
        out.append(r)
csv.writer(open("contacts_clean.csv", "w", newline="")).writerows(out)
print(len(out) - 1)
