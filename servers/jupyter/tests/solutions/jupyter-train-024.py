import collections
g = collections.defaultdict(set)
for l in open("wordlist.txt"):
    w = l.strip()
    if w:
        g["".join(sorted(w))].add(w)
print(sum(1 for s in g.values() if len(s) >= 3))
