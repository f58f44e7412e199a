import re

import numpy as np

low, high = (int(v) for v in re.search(r"between (\d+) and (\d+)", PROMPT).groups())

# A segmented sieve: the primes up to the square root of high, then only the range itself
# (a sieve from 0 to a trillion would not fit in memory).
root = int(high**0.5) + 1
small = np.ones(root + 1, dtype=bool)
small[:2] = False
for i in range(2, int(root**0.5) + 1):
    if small[i]:
        small[i * i :: i] = False
segment = np.ones(high - low + 1, dtype=bool)
for p in (int(p) for p in np.nonzero(small)[0]):
    start = max(p * p, (low + p - 1) // p * p)
    segment[start - low :: p] = False
for n in (0, 1):
    if low <= n <= high:
        segment[n - low] = False
primes = np.nonzero(segment)[0].astype(np.int64) + low
if "twin-prime" in PROMPT:
    answer = int(np.sum(primes[1:] - primes[:-1] == 2))
elif m := re.search(r"have (\d) as their last", PROMPT):
    answer = int(np.sum(primes % 10 == int(m.group(1))))
elif "sum" in PROMPT:
    answer = int(primes.sum())
else:
    answer = len(primes)
print(answer)
