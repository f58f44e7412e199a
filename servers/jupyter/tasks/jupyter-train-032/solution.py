import os

best = max(
    (
        (os.path.getsize(os.path.join(r, n)), os.path.relpath(os.path.join(r, n), "archive"))
        for r, _, fs in os.walk("archive")
        for n in fs
    )
)
print(best[1].replace(os.sep, "/"))
