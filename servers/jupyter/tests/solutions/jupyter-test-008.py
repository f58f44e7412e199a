import re
print(sum(1 for l in open("story.txt") if re.search(r"\briver\b", l, re.I)))
