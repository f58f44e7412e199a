ways = [1] + [0] * 300
for c in [1, 2, 5, 10, 20, 50, 100, 200]:
    for v in range(c, 301):
        ways[v] += ways[v - c]
print(ways[300])
