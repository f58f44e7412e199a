import datetime

n = 0
for line in open("diary.txt"):
    s = line.split(" | ")[0].strip()
    for fmt in ["%Y-%m-%d", "%d/%m/%Y", "%B %d, %Y", "%d %b %Y"]:
        try:
            d = datetime.datetime.strptime(s, fmt)
            break
        except ValueError:
            pass
    n += d.weekday() == 5
print(n)
