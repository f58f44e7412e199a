import hashlib
import os
import re
from collections import defaultdict

prompt = PROMPT
root = re.search(r"the folder (\S+?)[ ,]", prompt, re.IGNORECASE).group(1)
groups = defaultdict(list)
for here, _, names in os.walk(root):
    for name in names:
        path = os.path.join(here, name)
        with open(path, "rb") as f:
            groups[hashlib.sha256(f.read()).hexdigest()].append(path)
dupes = [paths for paths in groups.values() if len(paths) > 1]
if "number of groups" in prompt:
    print(len(dupes))
elif "number of files" in prompt:
    print(sum(len(p) - 1 for p in dupes))
else:
    print(sum((len(p) - 1) * os.path.getsize(p[0]) for p in dupes))
