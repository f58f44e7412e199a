import re

import pandas as pd

# The families test's skipped-step check sets SKIP to the cleaning steps to leave out, to show
# that the answer needs them; the reference does every step.
SKIP: set[str] = globals().get("SKIP", set())
LABELS = ["Strongly disagree", "Disagree", "Neutral", "Agree", "Strongly agree"]

codebook = pd.read_csv("codebook.csv")
wave1 = pd.read_csv("wave1.csv", dtype=str)
wave2 = pd.read_csv("wave2.csv")
if "duplicates" not in SKIP:
    wave1 = wave1.drop_duplicates(subset="respondent_id")
    wave2 = wave2.drop_duplicates(subset="resp")

question = PROMPT.split("mean change is the mean of those changes.")[1]
scale = re.search(r"change of the (\w+) score", question).group(1)
items = codebook[codebook["scale"] == scale]

if "text" in SKIP:
    numbers = {label: i + 1 for i, label in enumerate(LABELS)}
    answers1 = wave1[list(items["wave1_column"])].apply(lambda c: c.map(numbers))
else:
    numbers = {label.lower(): i + 1 for i, label in enumerate(LABELS)}
    answers1 = wave1[list(items["wave1_column"])].apply(
        lambda c: c.str.strip().str.lower().map(numbers)
    )
answers2 = wave2[list(items["wave2_column"])].astype(float)


def scores(answers: pd.DataFrame, columns: pd.Series) -> pd.Series:
    """Each row's scale score: the mean of its items, reverse-coded ones as 6 minus the answer."""
    reverse = (
        list(items["reverse_coded"] == "yes") if "reverse" not in SKIP else [False] * len(items)
    )
    coded = [6 - answers[c] if r else answers[c] for c, r in zip(columns, reverse, strict=True)]
    return pd.concat(coded, axis=1).mean(axis=1)


first = pd.DataFrame(
    {
        "id": wave1["respondent_id"]
        if "ids" in SKIP
        else wave1["respondent_id"].str.removeprefix("R-").astype(int),
        "segment": wave1["segment"],
        "score": scores(answers1, items["wave1_column"]),
    }
)
second = pd.DataFrame(
    {
        "id": wave2["resp"].astype(int),
        "segment": wave2["group"],
        "score": scores(answers2, items["wave2_column"]),
    }
)
panel = first.merge(second[["id", "score"]], on="id", suffixes=("_1", "_2"))
panel["change"] = panel["score_2"] - panel["score_1"]


def mean_change(segment: str) -> float:
    """The segment's mean change (with SKIP "panel": the difference of the waves' means)."""
    if "panel" in SKIP:
        return (
            second.loc[second["segment"] == segment, "score"].mean()
            - first.loc[first["segment"] == segment, "score"].mean()
        )
    return panel.loc[panel["segment"] == segment, "change"].mean()


segments = re.findall(r"segment (\w+)", question)
if "largest mean change" in question:
    value = max(mean_change(s) for s in first["segment"].unique())
elif "how much larger" in question:
    value = mean_change(segments[0]) - mean_change(segments[1])
else:
    value = mean_change(segments[0])
print(f"{value:.2f}")
