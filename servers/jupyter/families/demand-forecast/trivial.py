# The trivial forecast the score's 0 stands for: the mean of the last 28 days, repeated.
import numpy as np
import pandas as pd

history = pd.read_csv("sales_history.csv").drop_duplicates(subset="date")
history["units"] = np.where(history["unit"] == "dozen", history["units"] * 12, history["units"])
dates = pd.to_datetime(history["date"])
recent = history[dates > dates.max() - pd.Timedelta(days=28)]
future = pd.read_csv("future.csv")
pd.DataFrame({"id": future["date"], "prediction": recent["units"].mean()}).to_csv(
    "predictions.csv", index=False
)
print("done")
