a, b = 0, 1
for _ in range(5000):
    a, b = b, (a + b) % 1000000007
print(a)
