import csv

rows = list(csv.reader(open(os.path.join(ORIGINAL, "contacts.csv"), newline="")))
seen, want = set(), [rows[0]]
for r in rows[1:]:
    k = r[1].strip().lower()
    if k not in seen:
        seen.add(k)
        want.append(r)
try:
    got = [r for r in csv.reader(open("contacts_clean.csv", newline="")) if r]
except OSError:
    got = None
print("PASS" if got == want and ANSWER.strip().rstrip(".") == str(len(want) - 1) else "FAIL")
