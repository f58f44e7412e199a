want_in, want_logs = set(), set()
for name in os.listdir(os.path.join(ORIGINAL, "incoming")):
    size = os.path.getsize(os.path.join(ORIGINAL, "incoming", name))
    if size:
        (want_logs if name.endswith(".log") else want_in).add((name, size))


def listing(d):
    if not os.path.isdir(d):
        return None
    return {(n, os.path.getsize(os.path.join(d, n))) for n in os.listdir(d)}


print("PASS" if listing("incoming") == want_in and listing("logs") == want_logs else "FAIL")
