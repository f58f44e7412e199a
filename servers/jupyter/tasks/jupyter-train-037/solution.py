import csv
from fractions import Fraction

m = [[Fraction(x) for x in r] for r in csv.reader(open("matrix.csv")) if r]
n, det = len(m), Fraction(1)
for c in range(n):
    p = next((r for r in range(c, n) if m[r][c] != 0), None)
    if p is None:
        det = Fraction(0)
        break
    if p != c:
        m[c], m[p] = m[p], m[c]
        det = -det
    det *= m[c][c]
    for r in range(c + 1, n):
        f = m[r][c] / m[c][c]
        m[r] = [a - f * b for a, b in zip(m[r], m[c], strict=True)]
print(det)
