import datetime

MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
R = rng(113)
out = []
start = datetime.date(2024, 1, 1)
for i in range(120):
    d = start + datetime.timedelta(days=R.randint(0, 365))
    fmt = R.randint(0, 3)
    if fmt == 0:
        s = d.isoformat()
    elif fmt == 1:
        s = f"{d.day:02d}/{d.month:02d}/{d.year}"
    elif fmt == 2:
        s = f"{MONTHS[d.month - 1]} {d.day}, {d.year}"
    else:
        s = f"{d.day} {MONTHS[d.month - 1][:3]} {d.year}"
    out.append(f"{s} | event number {i}")
with open("diary.txt", "w") as f:
    f.write("\n".join(out) + "\n")
