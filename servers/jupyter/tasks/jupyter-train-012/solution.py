n = 200000
s = bytearray([1]) * n
s[0] = s[1] = 0
for i in range(2, int(n**0.5) + 1):
    if s[i]:
        s[i * i :: i] = bytearray(len(s[i * i :: i]))
print(sum(i for i in range(n) if s[i]))
