import re
from pathlib import Path

import pandas as pd

prompt: str = PROMPT
file = re.search(r"(\S+\.csv)", prompt).group(1)
column = pd.read_csv(file, nrows=0).columns[1]
frame = pd.read_csv(file, parse_dates=["date"])
recent = Path(file.replace(".csv", "_recent.csv"))
if recent.exists():
    newer = pd.read_csv(recent, sep=";", decimal=",")
    newer["date"] = pd.to_datetime(newer["date"], format="%d/%m/%Y")
    frame = pd.concat([frame, newer], ignore_index=True)
# A blank value is a missing day; a day listed twice (or in both files) counts once.
frame = frame.dropna(subset=[column]).drop_duplicates(subset="date")
series = frame.set_index("date")[column].sort_index()
monthly = series.resample("MS").mean().dropna()

if m := re.search(r"the mean for (\d{4}-\d{2})", prompt):
    print(f"{monthly[m.group(1)].iloc[0]:.2f}")
elif m := re.search(r"week from (\S+) \(Monday\)", prompt):
    weekly = series.resample("W-SUN").mean()
    end = pd.Timestamp(m.group(1)) + pd.Timedelta(days=6)
    print(f"{weekly[end]:.2f}")
elif m := re.search(r"the rolling mean on (\d{4}-\d{2}-\d{2})", prompt):
    rolling = series.rolling("7D").mean()
    print(f"{rolling[pd.Timestamp(m.group(1))]:.2f}")
elif "Which month" in prompt:
    print(monthly.idxmax().strftime("%Y-%m"))
else:
    print(f"{monthly.max():.2f}")
