import re

print(
    sum(
        int(m.replace(",", ""))
        for m in re.findall(r"-?\d{1,3}(?:,\d{3})+|-?\d+", open("report.txt").read())
    )
)
