# Hidden check for the "city-summary" task: runs after the agent's processes are stopped, in the
# home folder, with HOME, ANSWER and ORIGINAL (a fresh copy of the starting files) defined and
# csv, json, math and os imported. Prints PASS, or FAIL: reason.
want = {}
with open(os.path.join(ORIGINAL, "orders.csv")) as source:
    for row in csv.DictReader(source):
        want[row["city"]] = round(want.get(row["city"], 0.0) + float(row["amount"]), 2)
path = os.path.join(HOME, "summary.json")
if not os.path.isfile(path) or os.path.getsize(path) > 1_000_000:
    print("FAIL: summary.json is missing or too large")
else:
    with open(path) as produced:
        got = json.load(produced)
    ok = isinstance(got, dict) and set(got) == set(want)
    ok = ok and all(abs(float(got[city]) - total) <= 0.01 for city, total in want.items())
    print("PASS" if ok else "FAIL: summary.json does not hold each city's total")
