import collections
c = collections.Counter(l.split()[0] for l in open("access.log") if l.split()[-2] == "404")
print(c.most_common(1)[0][0])
