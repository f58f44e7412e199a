cache = {1: 1}
def length(n):
    path = []
    while n not in cache:
        path.append(n)
        n = n // 2 if n % 2 == 0 else 3 * n + 1
    l = cache[n]
    for m in reversed(path):
        l += 1
        cache[m] = l
    return l
print(max(range(1, 300000), key=length))
