import os
import re
import sqlite3

import pandas as pd

# Cleaning steps the family test's naive runs skip: "offsets" (wall clocks read as UTC) or
# "bots" (bots' events kept).
SKIP: set[str] = globals().get("SKIP", set())

clicks = pd.read_json("clicks.jsonl", lines=True, dtype={"ts": str})
if "offsets" in SKIP:
    clicks["time"] = pd.to_datetime(clicks["ts"].str[:19], format="%Y-%m-%dT%H:%M:%S")
else:
    clicks["time"] = pd.to_datetime(clicks["ts"], utc=True, format="ISO8601").dt.tz_localize(None)
events = [clicks[["user_id", "time", "page", "agent"]]]
if os.path.exists("app_events.jsonl"):
    app = pd.read_json("app_events.jsonl", lines=True)
    events.append(
        pd.DataFrame(
            {
                "user_id": app["uid"].str[1:].astype(int),
                "time": pd.to_datetime(app["time_ms"], unit="ms"),
                "page": "/" + app["screen"].where(app["screen"] != "home", ""),
                "agent": app["ua"],
            }
        )
    )
events = pd.concat(events, ignore_index=True)

with open("bots.txt") as f:
    bots = {line.strip().lower() for line in f if line.strip() and not line.startswith("#")}
if "bots" not in SKIP:
    events = events[~events["agent"].str.strip().str.lower().isin(bots)]

events = events.sort_values(["user_id", "time"]).reset_index(drop=True)
gap = events.groupby("user_id")["time"].diff()
events["session"] = (gap.isna() | (gap > pd.Timedelta(minutes=30))).cumsum()

with sqlite3.connect("users.db") as db:
    users = pd.read_sql_query("SELECT * FROM users", db)
users["plan"] = users["plan"].str.strip().str.lower()
if m := re.search(r"users who signed up in (\w+) 2024", PROMPT):
    month = pd.to_datetime(f"1 {m.group(1)} 2024", format="%d %B %Y").strftime("%Y-%m")
    cohort = users[users["signup_date"].str.startswith(month)]
elif m := re.search(r"users on the (\w+) plan", PROMPT):
    cohort = users[users["plan"] == m.group(1)]
else:
    country = re.search(r"users from ([A-Z][a-z]+)", PROMPT).group(1)
    cohort = users[users["country"] == country]
mine = events[events["user_id"].isin(cohort["user_id"])]
sessions = mine.groupby("session").agg(
    start=("time", "min"), end=("time", "max"), last=("page", "last"), pages=("page", list)
)


def converted(pages: list[str]) -> bool:
    """Whether the pages visit /product, then /cart, then /checkout."""
    steps = ["/product", "/cart", "/checkout"]
    for page in pages:
        if steps and page == steps[0]:
            steps.pop(0)
    return not steps


if "went on to visit /cart" in PROMPT:
    visited = sessions[sessions["pages"].map(lambda p: "/product" in p)]
    print(f"{100 * visited['pages'].map(converted).mean():.1f}")
elif "median length" in PROMPT:
    minutes = (sessions["end"] - sessions["start"]).dt.total_seconds() / 60
    print(f"{minutes.median():.2f}")
elif "ends a session" in PROMPT or "the last of a session" in PROMPT:
    print(sessions["last"].value_counts().idxmax())
else:
    print(len(sessions))
