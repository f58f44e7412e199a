import re

print(
    min(
        re.sub(r"[^a-z0-9]+", "-", t.strip().lower()).strip("-")
        for t in open("titles.txt")
        if t.strip()
    )
)
