cache = {1: 1}


def length(n):
    path = []
    while n not in cache:
        path.append(n)
        n = n // 2 if n % 2 == 0 else 3 * n + 1
    steps = cache[n]
    for m in reversed(path):
        steps += 1
        cache[m] = steps
    return steps


print(max(range(1, 300000), key=length))
