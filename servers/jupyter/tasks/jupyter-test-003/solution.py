import csv
import statistics

rows = list(csv.DictReader(open("survey.csv")))
hours = [float(r["hours_online"]) for r in rows]
wellbeing = [float(r["wellbeing"]) for r in rows]
print(f"{statistics.correlation(hours, wellbeing):.3f}")
