import json
import re

file = re.search(r"The file (\S+) in your home directory", PROMPT).group(1)
orders = json.load(open(file))
path, wanted = re.search(r'Consider the orders whose ([\w.]+) is "([^"]+)"', PROMPT).groups()
outer, inner = path.split(".")
chosen = [o for o in orders if o[outer][inner] == wanted]


def items_value(order):
    return sum(item["qty"] * item["unit_price"] for item in order["items"])


if "total value of their items" in PROMPT:
    value = sum(items_value(o) for o in chosen)
elif "mean number of units" in PROMPT:
    value = sum(sum(i["qty"] for i in o["items"]) for o in chosen) / len(chosen)
elif "mean order total" in PROMPT:
    value = sum(items_value(o) + o["shipping"]["cost"] for o in chosen) / len(chosen)
else:
    prices = [i["unit_price"] for o in chosen for i in o["items"]]
    value = sum(prices) / len(prices)
print(f"{value:.2f}")
