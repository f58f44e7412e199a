sets = [set(line.split()) for line in open("lines.txt") if line.strip()]
print(sorted(set.intersection(*sets))[0])
