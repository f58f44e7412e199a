import os
import re

import matplotlib.pyplot as plt
import pandas as pd

prompt = PROMPT
x_label = re.search(r'the x axis labelled "([^"]+)"', prompt).group(1)
y_label = re.search(r'the y axis labelled "([^"]+)"', prompt).group(1)

sales = pd.read_csv("sales.csv")
if "status" in sales.columns:
    sales = sales[sales["status"] != "returned"]
sales = sales.drop_duplicates("order_id")
sales["revenue"] = sales["units"] * sales["unit_price"]
orders = sales[["order_id", "date", "region", "revenue"]]
if os.path.exists("web_orders.csv"):
    web = pd.read_csv("web_orders.csv")
    web = pd.DataFrame(
        {
            "order_id": web["id"],
            "date": pd.to_datetime(web["day"], format="%d/%m/%Y").dt.strftime("%Y-%m-%d"),
            "region": web["area"],
            "revenue": web["amount_cents"] / 100,
        }
    )
    web = web[~web["order_id"].isin(orders["order_id"])]
    orders = pd.concat([orders, web])
orders = orders.assign(month=orders["date"].str[:7])

fig, ax = plt.subplots()
if "a bar chart" in prompt:
    totals = orders.groupby("region")["revenue"].sum()
    ax.bar(list(totals.index), list(totals.values))
else:
    regions = re.search(r'of the regions "([^"]+)" and "([^"]+)"', prompt).groups()
    first, last = re.search(r"from (\d{4}-\d{2}) to (\d{4}-\d{2})", prompt).groups()
    months = sorted(m for m in orders["month"].unique() if first <= m <= last)
    for region in regions:
        monthly = orders[orders["region"] == region].groupby("month")["revenue"].sum()
        ax.plot(months, [float(monthly.get(m, 0.0)) for m in months], label=region)
    ax.legend()
ax.set_xlabel(x_label)
ax.set_ylabel(y_label)
plt.show()
print("done")
