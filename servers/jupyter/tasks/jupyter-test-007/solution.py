n, k = 0, 5
while k <= 2500:
    n += 2500 // k
    k *= 5
print(n)
