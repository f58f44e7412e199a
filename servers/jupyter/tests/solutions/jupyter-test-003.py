import csv, statistics
rows = list(csv.DictReader(open("survey.csv")))
print(f"{statistics.correlation([float(r['hours_online']) for r in rows], [float(r['wellbeing']) for r in rows]):.3f}")
