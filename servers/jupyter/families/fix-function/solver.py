import re

module = re.search(r"(\w+\.py)", PROMPT).group(1)
names = re.findall(r"`(\w+)`", PROMPT)
source = open(module).read()

# A correct body for each function the docstring's opening words describe; `values` stands
# for the first parameter, `other` for the second (a window, a bound, a size, weights).
BODIES = {
    "The median of": """
    ordered = sorted(values)
    n = len(ordered)
    if n % 2:
        return ordered[n // 2]
    return (ordered[n // 2 - 1] + ordered[n // 2]) / 2""",
    "The mean of every run": """
    return [sum(values[i : i + other]) / other for i in range(len(values) - other + 1)]""",
    "Rescales a list": """
    low, high = min(values), max(values)
    return [(v - low) / (high - low) for v in values]""",
    "How often each word": """
    counts = {}
    for word in values.lower().split():
        counts[word] = counts.get(word, 0) + 1
    return counts""",
    "The running totals": """
    totals, total = [], 0
    for v in values:
        total += v
        totals.append(total)
    return totals""",
    "Each value of the list limited": """
    low, high = other, third
    return [min(max(v, low), high) for v in values]""",
    "The second largest": """
    return sorted(set(values))[-2]""",
    "The value that occurs most often": """
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    best = max(counts.values())
    return min(v for v in counts if counts[v] == best)""",
    "The population variance": """
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / len(values)""",
    "The list cut into": """
    return [values[i : i + other] for i in range(0, len(values), other)]""",
    "The distinct values": """
    return list(dict.fromkeys(values))""",
    "How many values": """
    return sum(1 for v in values if v > other)""",
    "The change from each value": """
    return [b - a for a, b in zip(values, values[1:])]""",
    "The mean of the values weighted": """
    return sum(v * w for v, w in zip(values, other)) / sum(other)""",
    "The length of the longest block": """
    best = current = 1
    for a, b in zip(values, values[1:]):
        current = current + 1 if a == b else 1
        best = max(best, current)
    return best""",
    "largest values of the list": """
    return sorted(values, reverse=True)[:other]""",
}

fixed = ""
for name in names:
    parameters, docstring = re.search(
        rf'def {name}\(([^)]*)\):\n    """(.*?)"""', source, re.S
    ).groups()
    body = next(body for key, body in BODIES.items() if key in docstring)
    # The body's own names, bound from the function's parameters in order.
    given = [p.strip() for p in parameters.split(",")]
    binding = "".join(
        f"\n    {own} = {p}"
        for own, p in zip(["values", "other", "third"][: len(given)], given, strict=True)
    )
    fixed += f"\n\ndef {name}({parameters}):{binding}{body}\n"
# Later definitions replace the buggy ones when the module is imported.
with open(module, "a") as out:
    out.write(fixed)
print("done")
