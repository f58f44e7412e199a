import json
import re
from datetime import datetime

prompt = PROMPT
path = re.search(r"The file (\S+) in your home directory", prompt).group(1)
start, end = (
    datetime.fromisoformat(s) for s in re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", prompt)
)
service = m.group(1) if (m := re.search(r'by the service "([^"]+)"', prompt)) else None
levels = {"WARN", "ERROR"} if "WARN or above" in prompt else {"ERROR"}


def parse(line):
    line = line.strip()
    if line.startswith("{"):
        entry = json.loads(line)
        return entry["time"], entry["level"].upper(), entry["service"]
    if " | " in line:
        stamp, svc, level, _ = line.split(" | ", 3)
        return stamp.rstrip("Z"), level, svc
    date, time, level, svc, _ = line.split(" ", 4)
    return f"{date}T{time}", level, svc.strip("[]")


count = 0
with open(path) as log:
    for line in log:
        if not line.strip():
            continue
        stamp, level, svc = parse(line)
        when = datetime.fromisoformat(stamp)
        if start <= when < end and level in levels and (service is None or svc == service):
            count += 1
print(count)
