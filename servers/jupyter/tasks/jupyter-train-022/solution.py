import re

found = re.findall(
    r"[A-Za-z0-9._+-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,}", open("messages.txt").read()
)
print(len({a.lower() for a in found}))
