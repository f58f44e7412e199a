import collections

g = collections.defaultdict(set)
for line in open("wordlist.txt"):
    w = line.strip()
    if w:
        g["".join(sorted(w))].add(w)
print(sum(1 for s in g.values() if len(s) >= 3))
