import re

module = re.search(r"(\w+\.py)", PROMPT).group(1)
names = re.findall(r"`(\w+)`", PROMPT)
source = open(module).read()

# A correct body for each parser, by words of its docstring; `text` stands for its parameter.
BODIES = {
    "seconds in a duration": """
    units = {"d": 86400, "h": 3600, "m": 60, "s": 1}
    return sum(int(part[:-1]) * units[part[-1]] for part in text.split())""",
    "money string": """
    negative = text.startswith("-")
    digits = text.lstrip("-").lstrip("$").replace(",", "")
    dollars, _, cents = digits.partition(".")
    value = int(dollars) * 100 + int(cents or 0)
    return -value if negative else value""",
    "ISO form": """
    day, month, year = (int(part) for part in text.strip().split("/"))
    return f"{year:04d}-{month:02d}-{day:02d}\"""",
    "line of CSV": """
    import csv

    return next(csv.reader([text])) if text else [""]""",
    "The settings in a line": """
    pairs = {}
    for part in text.split(";"):
        if part.strip():
            key, _, value = part.partition("=")
            pairs[key.strip()] = value.strip()
    return pairs""",
    "12-hour clock": """
    clock, half = text.strip().lower().split()
    hours, minutes = (int(part) for part in clock.split(":"))
    return (hours % 12 + (12 if half == "pm" else 0)) * 60 + minutes""",
}

fixed = ""
for name in names:
    parameter, docstring = re.search(
        rf'def {name}\((\w+)\):\n    """(.*?)"""', source, re.S
    ).groups()
    body = next(body for key, body in BODIES.items() if key in docstring)
    fixed += f"\n\ndef {name}({parameter}):\n    text = {parameter}{body}\n"
# Later definitions replace the buggy ones when the module is imported.
with open(module, "a") as out:
    out.write(fixed)
print("done")
