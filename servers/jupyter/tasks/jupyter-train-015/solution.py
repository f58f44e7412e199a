lo, hi = 2.0, 3.0
for _ in range(100):
    mid = (lo + hi) / 2
    if mid**3 - 2 * mid - 5 > 0:
        hi = mid
    else:
        lo = mid
print(f"{lo:.10f}")
