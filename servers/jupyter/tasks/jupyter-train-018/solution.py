import itertools

print(f"{sum(1 for r in itertools.product(range(1, 7), repeat=5) if sum(r) == 17) / 6**5:.10f}")
