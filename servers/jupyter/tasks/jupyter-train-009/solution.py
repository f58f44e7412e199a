import collections

c = collections.Counter(line.split()[0] for line in open("access.log") if line.split()[-2] == "404")
print(c.most_common(1)[0][0])
