plain = "The quick analyst verified every number before trusting the final spreadsheet"
shift = 11
out = "".join(
    chr((ord(c) - base + shift) % 26 + base) if c.isalpha() else c
    for c in plain
    for base in [65 if c.isupper() else 97]
)
with open("cipher.txt", "w") as f:
    f.write(out + ".\n")
