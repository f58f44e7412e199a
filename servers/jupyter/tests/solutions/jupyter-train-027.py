sets = [set(l.split()) for l in open("lines.txt") if l.strip()]
print(sorted(set.intersection(*sets))[0])
