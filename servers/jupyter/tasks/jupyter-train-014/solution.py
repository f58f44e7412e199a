import math

n = 200000
h = 2 / n


def f(x):
    return math.exp(-x * x) * math.cos(3 * x)


s = f(0) + f(2) + sum((4 if i % 2 else 2) * f(i * h) for i in range(1, n))
print(f"{s * h / 3:.10f}")
