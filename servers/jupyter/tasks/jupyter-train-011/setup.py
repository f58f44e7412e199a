import gzip
import io

R = rng(83)
f = io.StringIO(newline="")
w = csv.writer(f)
w.writerow(["user", "event", "duration_ms"])
for _ in range(1000):
    w.writerow(
        [
            f"u{R.randint(1, 99)}",
            R.choice(["view", "click", "checkout", "view"]),
            R.randint(20, 4000),
        ]
    )
# mtime=0: the gzip header would otherwise carry the time, and the setup must be byte-stable.
open("events.csv.gz", "wb").write(gzip.compress(f.getvalue().encode(), mtime=0))
