import hashlib
import os
import re
from collections import defaultdict

prompt = PROMPT
root = re.search(r"The folder (\S+) in your home directory", prompt).group(1)
groups = defaultdict(list)
for here, _, names in os.walk(root):
    for name in names:
        path = os.path.join(here, name)
        with open(path, "rb") as f:
            groups[hashlib.sha256(f.read()).hexdigest()].append(path)
dupes = [paths for paths in groups.values() if len(paths) > 1]
if "How many groups" in prompt:
    print(len(dupes))
elif "how many files would you delete" in prompt:
    print(sum(len(p) - 1 for p in dupes))
else:
    print(sum((len(p) - 1) * os.path.getsize(p[0]) for p in dupes))
