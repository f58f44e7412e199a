import csv

print(
    sum(
        1
        for r in csv.DictReader(open("grades.csv"))
        if (int(r["test1"]) + int(r["test2"]) + int(r["test3"])) / 3 >= 70
    )
)
