import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression

history = pd.read_csv("sales_history.csv").drop_duplicates(subset="date")
history["units"] = np.where(history["unit"] == "dozen", history["units"] * 12, history["units"])
future = pd.read_csv("future.csv")
origin = pd.Timestamp(history["date"].min())


def features(frame: pd.DataFrame) -> np.ndarray:
    # Trend, weekday, a yearly swing and the promotion flag.
    dates = pd.to_datetime(frame["date"])
    t = (dates - origin).dt.days.to_numpy(dtype=float)
    day_of_year = (dates - pd.Timestamp("2020-01-01")).dt.days.to_numpy(dtype=float)
    angle = 2 * np.pi * day_of_year / 365.25
    weekdays = [(dates.dt.dayofweek == d).astype(float) for d in range(6)]
    columns = [t, np.sin(angle), np.cos(angle), frame["promo"].astype(float), *weekdays]
    return np.column_stack(columns)


model = LinearRegression().fit(features(history), history["units"])
pd.DataFrame({"id": future["date"], "prediction": model.predict(features(future))}).to_csv(
    "predictions.csv", index=False
)
print("done")
