import collections
import re

stop = {"the", "a", "and", "of", "to", "in", "was", "it"}
c = collections.Counter(
    w for w in re.findall(r"[a-z]+", open("story.txt").read().lower()) if w not in stop
)
print(c.most_common(1)[0][0])
