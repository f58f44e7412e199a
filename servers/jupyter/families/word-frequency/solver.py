import re
from collections import Counter

prompt = PROMPT
path, stop_path = re.search(
    r"The file (\S+) in your home directory is an English text, and (\S+)", prompt
).groups()
stops = {line.strip().lower() for line in open(stop_path) if line.strip()}
words = Counter(w.lower() for w in re.findall(r"[A-Za-z]+", open(path).read()))
content = Counter({w: c for w, c in words.items() if w not in stops})

if m := re.search(r'does the word "([a-z]+)" occur', prompt):
    print(words[m.group(1)])
elif "How many distinct words" in prompt:
    print(len(content))
else:
    print(content.most_common(1)[0][0])
