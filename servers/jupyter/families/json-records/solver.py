import json
import re
from pathlib import Path

prompt: str = PROMPT


def number(value: object) -> float:
    """A qty, price or cost as the untidy export writes it: a number, a string, "$12.50" or
    null (free shipping)."""
    if value is None:
        return 0.0
    return float(str(value).replace("$", "").strip())


def tidy(text: str) -> str:
    return text.strip().lower()


if Path("exports").is_dir():
    orders: list[dict] = []
    seen: set[str] = set()
    for part in sorted(Path("exports").glob("*.json")):
        for order in json.loads(part.read_text()):
            if order["order_id"] not in seen:
                seen.add(order["order_id"])
                orders.append(order)
    customers = {c["id"]: c for c in json.loads(Path("customers.json").read_text())}
    for order in orders:
        order["customer"] = customers[order["customer_id"]]
else:
    file = re.search(r"(\S+\.json)", prompt).group(1)
    orders = json.loads(Path(file).read_text())

path, wanted = re.search(r'orders whose ([\w.]+) is "([^"]+)"', prompt).groups()
outer, inner = path.split(".")
chosen = [o for o in orders if tidy(str(o[outer][inner])) == tidy(wanted)]


def items_value(order: dict) -> float:
    return sum(number(item["qty"]) * number(item["unit_price"]) for item in order["items"])


if "total value of their items" in prompt:
    value = sum(items_value(o) for o in chosen)
elif "mean number of units" in prompt:
    value = sum(sum(number(i["qty"]) for i in o["items"]) for o in chosen) / len(chosen)
elif "mean order total" in prompt:
    value = sum(items_value(o) + number(o["shipping"]["cost"]) for o in chosen) / len(chosen)
else:
    prices = [number(i["unit_price"]) for o in chosen for i in o["items"]]
    value = sum(prices) / len(prices)
print(f"{value:.2f}")
