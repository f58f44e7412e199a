import os
import re
from collections import Counter

prompt = PROMPT
stop_path = re.search(r"(\S+\.txt)(?: beside it)? lists stop words|listed in (\S+\.txt)", prompt)
stop_path = stop_path.group(1) or stop_path.group(2)
if m := re.search(r"The folder (\S+) in your home directory holds an English text", prompt):
    folder = m.group(1)
    text = "".join(
        open(os.path.join(folder, name), encoding="utf-8").read()
        for name in sorted(os.listdir(folder))
    )
else:
    path = re.search(r"The file (\S+) in your home directory is an English text", prompt).group(1)
    text = open(path, encoding="utf-8").read()
stops = set()
for line in open(stop_path):
    line = line.strip().lower()
    if line and not line.startswith("#"):
        stops.add(line)
words = Counter(w.lower() for w in re.findall(r"[A-Za-z]+", text))
content = {w: c for w, c in words.items() if w not in stops}

if m := re.search(r'times the word "([a-z]+)" occurs', prompt):
    print(words[m.group(1)])
elif "number of distinct words" in prompt:
    print(len(content))
else:
    print(min(content, key=lambda w: (-content[w], w)))
