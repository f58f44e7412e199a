import glob
import os
import re

import pandas as pd


def readings(path):
    """A station's readings as (UTC time, °C), errors and empty readings dropped, duplicates
    counted once."""
    if path.endswith(".parquet"):
        raw = pd.read_parquet(path).drop_duplicates()
        frame = pd.DataFrame(
            {
                "utc": pd.to_datetime(raw["epoch_s"], unit="s", utc=True),
                "value": raw["kelvin"],
                "celsius": raw["kelvin"] - 273.15,
            }
        )
    else:
        raw = pd.read_csv(path, dtype=str).drop_duplicates()
        if "temp_f" in raw:
            local = pd.to_datetime(raw["local_time"], format="%Y-%m-%d %H:%M")
            sign = raw["utc_offset"].str[0].map({"+": 1, "-": -1})
            minutes = raw["utc_offset"].str[1:3].astype(int) * 60 + raw["utc_offset"].str[
                4:6
            ].astype(int)
            utc = local - pd.to_timedelta(sign * minutes, unit="m")
            value = pd.to_numeric(raw["temp_f"])
            frame = pd.DataFrame(
                {
                    "utc": utc.dt.tz_localize("UTC"),
                    "value": value,
                    "celsius": (value - 32) * 5 / 9,
                }
            )
        else:
            value = pd.to_numeric(raw["temp_c"])
            frame = pd.DataFrame(
                {
                    "utc": pd.to_datetime(raw["timestamp"], format="ISO8601", utc=True),
                    "value": value,
                    "celsius": value,
                }
            )
    frame = frame[frame["value"].notna() & (frame["value"] != -999)]
    return frame.drop_duplicates(subset="utc")


def hourly(station):
    frame = stations[station]
    return frame.groupby(frame["utc"].dt.floor("h"))["celsius"].mean()


stations = {}
for path in glob.glob("*.csv") + glob.glob("*.parquet"):
    stations[os.path.splitext(path)[0]] = readings(path)

if m := re.search(r"longest run .* the (\w+) station's .* exceeded ([\d.]+) °C", PROMPT):
    means = hourly(m.group(1))
    above = means[means > float(m.group(2))].index
    longest = run = 0
    previous = None
    for hour in above:
        run = run + 1 if previous is not None and hour - previous == pd.Timedelta(hours=1) else 1
        previous = hour
        longest = max(longest, run)
    print(longest)
elif m := re.search(r"did the (\w+) station's hourly mean temperature exceed ([\d.]+) °C", PROMPT):
    means = hourly(m.group(1))
    print(int((means > float(m.group(2))).sum()))
elif m := re.search(r"the (\w+) station's highest hourly mean temperature on ([\d-]+)", PROMPT):
    means = hourly(m.group(1))
    day = means[means.index.strftime("%Y-%m-%d") == m.group(2)]
    print(f"{day.max():.2f}")
else:
    m = re.search(r"both the (\w+) and the (\w+) stations", PROMPT)
    both = pd.concat([hourly(m.group(1)), hourly(m.group(2))], axis=1, join="inner")
    print(f"{(both.iloc[:, 0] - both.iloc[:, 1]).abs().max():.2f}")
