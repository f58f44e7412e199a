import re

import pandas as pd

prompt = PROMPT
sales = pd.read_csv("sales.csv")
sales["revenue"] = sales["units"] * sales["unit_price"]
if m := re.search(r"of the (\S+) region", prompt):
    rows = sales[sales["region"] == m.group(1)]
elif m := re.search(r'the product "([^"]+)"', prompt):
    rows = sales[sales["product"] == m.group(1)]
else:
    month = re.search(r"the month (\d{4}-\d{2})", prompt).group(1)
    rows = sales[sales["date"].str.startswith(month)]
print(f"{rows['revenue'].sum():.2f}")
