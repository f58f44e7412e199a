import glob
import re

prompt = PROMPT
path = re.search(r"(?:The file|log to|directory,|holds) (\S+?),? ", prompt).group(1)
method, pattern = re.search(r"the endpoint (\S+) ([^\s,]+)", prompt).groups()
regex = re.compile("^" + re.escape(pattern).replace(re.escape("<id>"), r"\d+") + "/?$")
COMMON = re.compile(r'"(\S+) (\S+) HTTP/[\d.]+" (\d+) (\d+) (\S+)\s*$')


def keep(status: int) -> bool:
    if "successful status" in prompt:
        return 200 <= status < 300
    if "excluding server errors" in prompt:
        return status < 500
    return True


def milliseconds(text: str) -> float | None:
    """A latency as written (87ms, 0.087s, 87 or -) in milliseconds; None when absent."""
    if text == "-":
        return None
    if text.endswith("ms"):
        return float(text[:-2])
    if text.endswith("s"):
        return float(text[:-1]) * 1000
    return float(text)


latencies = []
for name in glob.glob(glob.escape(path) + "*"):
    with open(name) as log:
        for line in log:
            if "method=" in line:
                fields = dict(f.split("=", 1) for f in line.split())
                verb, target, status = fields["method"], fields["path"], int(fields["status"])
                if "latency_s" in fields:
                    latency = milliseconds(fields["latency_s"] + "s")
                else:
                    latency = milliseconds(fields["latency_ms"])
            elif m := COMMON.search(line):
                verb, target, status = m.group(1), m.group(2), int(m.group(3))
                latency = milliseconds(m.group(5))
            else:
                continue
            target = target.split("?", 1)[0]
            if latency is not None and verb == method and regex.match(target) and keep(status):
                latencies.append(round(latency))

if "mean latency" in prompt:
    print(f"{sum(latencies) / len(latencies):.2f}")
else:
    p = int(re.search(r"the (\d+)th percentile", prompt).group(1))
    ordered = sorted(latencies)
    print(ordered[max(1, -(-p * len(ordered) // 100)) - 1])
