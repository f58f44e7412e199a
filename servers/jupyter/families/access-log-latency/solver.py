import re

prompt = PROMPT
path = re.search(r"The file (\S+) in your home directory", prompt).group(1)
method, pattern = re.search(r"the endpoint (\S+) ([^\s,]+)", prompt).groups()
regex = re.compile("^" + re.escape(pattern).replace(re.escape("<id>"), r"\d+") + "$")


def keep(status):
    if "successful status" in prompt:
        return 200 <= status < 300
    if "excluding server errors" in prompt:
        return status < 500
    return True


latencies = []
with open(path) as log:
    for line in log:
        if "latency_ms=" in line:
            fields = dict(f.split("=", 1) for f in line.split())
            verb, target = fields["method"], fields["path"]
            status, latency = int(fields["status"]), int(fields["latency_ms"])
        else:
            m = re.search(r'"(\S+) (\S+) HTTP/[\d.]+" (\d+) (\d+) (\d+)ms\s*$', line)
            if not m:
                continue
            verb, target = m.group(1), m.group(2)
            status, latency = int(m.group(3)), int(m.group(5))
        target = target.split("?", 1)[0]
        if verb == method and regex.match(target) and keep(status):
            latencies.append(latency)

if "mean latency" in prompt:
    print(f"{sum(latencies) / len(latencies):.2f}")
else:
    p = int(re.search(r"the (\d+)th percentile", prompt).group(1))
    ordered = sorted(latencies)
    print(ordered[max(1, -(-p * len(ordered) // 100)) - 1])
