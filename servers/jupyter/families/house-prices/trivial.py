# The trivial predictor the score's 0 stands for: every house at the average sale price.
import pandas as pd

sales = pd.read_csv("sales.csv")
held_out = pd.read_csv("held_out.csv")
pd.DataFrame({"id": held_out["id"], "prediction": sales["price"].mean()}).to_csv(
    "predictions.csv", index=False
)
print("done")
