import glob
import gzip
import json
import re
from datetime import datetime

prompt = PROMPT
path = re.search(r"(?:The file|the log|In your home directory,|holds) (\S+?),? ", prompt).group(1)
start, end = (
    datetime.fromisoformat(s) for s in re.findall(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", prompt)
)
service = m.group(1) if (m := re.search(r'by the service "([^"]+)"', prompt)) else None
levels = {"WARN", "ERROR"} if "WARN or above" in prompt else {"ERROR"}
TEXT = re.compile(r"(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d) (\w+) \[([^\]]+)\] ")
PIPES = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)Z \| ([^|]+) \| (\w+) \| ")


def parse(line: str) -> tuple[str, str, str] | None:
    """The entry's (time, level, service), or None for a line that is not an entry."""
    if line.startswith("{"):
        try:
            entry = json.loads(line)
        except ValueError:
            return None
        return entry["time"], entry["level"].upper(), entry["service"]
    if m := PIPES.match(line):
        return m[1], m[3].upper(), m[2]
    if m := TEXT.match(line):
        return f"{m[1]}T{m[2]}", m[3].upper(), m[4]
    return None


def lines_of(name: str) -> list[str]:
    opener = gzip.open if name.endswith(".gz") else open
    with opener(name, "rt") as f:
        return f.read().splitlines()


count = 0
for name in glob.glob(glob.escape(path) + "*"):
    for line in lines_of(name):
        if (entry := parse(line.strip())) is None:
            continue
        stamp, level, svc = entry
        when = datetime.fromisoformat(stamp)
        if start <= when < end and level in levels and (service is None or svc == service):
            count += 1
print(count)
