import re

import pandas as pd

file, column = re.search(r"The file (\S+) in your home .*? and (\w+);", PROMPT).groups()
series = pd.read_csv(file, parse_dates=["date"]).set_index("date")[column]
monthly = series.resample("MS").mean().dropna()

if m := re.search(r"What is the mean for (\d{4}-\d{2})\?", PROMPT):
    print(f"{monthly[m.group(1)].iloc[0]:.2f}")
elif m := re.search(r"week from (\S+) \(Monday\)", PROMPT):
    weekly = series.resample("W-SUN").mean()
    end = pd.Timestamp(m.group(1)) + pd.Timedelta(days=6)
    print(f"{weekly[end]:.2f}")
elif m := re.search(r"What is it on (\S+)\?", PROMPT):
    rolling = series.rolling("7D").mean()
    print(f"{rolling[pd.Timestamp(m.group(1))]:.2f}")
elif "Which month" in PROMPT:
    print(monthly.idxmax().strftime("%Y-%m"))
else:
    print(f"{monthly.max():.2f}")
