import os
import re
from datetime import date

prompt = PROMPT
root = re.search(r"the folder (\S+?)[ ,]", prompt, re.IGNORECASE).group(1)
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def real(year: str, month: str, day: str) -> bool:
    """Whether the day exists in the calendar."""
    try:
        date(int(year), int(month), int(day))
    except ValueError:
        return False
    return True


if "named after its extension" in prompt:
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if os.path.isfile(path):
            folder = name.rsplit(".", 1)[1].lower() if "." in name else "other"
            os.makedirs(os.path.join(root, folder), exist_ok=True)
            os.rename(path, os.path.join(root, folder, name))
elif "Rename each such file in place" in prompt:
    if "DD.MM.YYYY" in prompt:
        pattern, order = r"(\d\d)\.(\d\d)\.(\d{4})", "dmy"
    elif "MM-DD-YYYY" in prompt:
        pattern, order = r"(\d\d)-(\d\d)-(\d{4})", "mdy"
    else:
        pattern, order = r"(\d\d)-([A-Z][a-z]{2})-(\d{4})", "dmy"

    def iso(m: re.Match) -> str:
        parts = dict(zip(order, m.groups(), strict=True))
        month = parts["m"]
        if month in MONTHS:
            month = f"{MONTHS.index(month) + 1:02d}"
        if not real(parts["y"], month, parts["d"]):
            return m.group(0)
        return f"{parts['y']}-{month}-{parts['d']}"

    for here, _, names in os.walk(root):
        for name in names:
            new = re.sub(pattern, iso, name)
            if new != name:
                os.rename(os.path.join(here, name), os.path.join(here, new))
else:
    for name in sorted(os.listdir(root)):
        m = re.search(r"(\d{4})-(\d\d)-(\d\d)", name)
        if m and real(*m.groups()) and os.path.isfile(os.path.join(root, name)):
            folder = os.path.join(root, m[1], m[2])
            os.makedirs(folder, exist_ok=True)
            os.rename(os.path.join(root, name), os.path.join(folder, name))
print("done")
