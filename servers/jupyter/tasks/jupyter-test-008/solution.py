import re

print(sum(1 for line in open("story.txt") if re.search(r"\briver\b", line, re.I)))
