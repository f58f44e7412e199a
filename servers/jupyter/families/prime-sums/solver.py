import re

import numpy as np

low, high = (int(v) for v in re.search(r"between (\d+) and (\d+)", PROMPT).groups())
sieve = np.ones(high + 3, dtype=bool)
sieve[:2] = False
for i in range(2, int(high**0.5) + 2):
    if sieve[i]:
        sieve[i * i :: i] = False
primes = np.nonzero(sieve[: high + 1])[0]
primes = primes[primes >= low]
if "twin-prime" in PROMPT:
    answer = int(np.sum(primes[1:] - primes[:-1] == 2))
elif m := re.search(r"have (\d) as their last", PROMPT):
    answer = int(np.sum(primes % 10 == int(m.group(1))))
elif "sum" in PROMPT:
    answer = int(primes.astype(np.int64).sum())
else:
    answer = len(primes)
print(answer)
