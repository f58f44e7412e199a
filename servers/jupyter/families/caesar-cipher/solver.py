import re

prompt = PROMPT
path = re.search(r"The file (\S+) in your home directory", prompt).group(1)
cipher = open(path).read()


def shifted(text, shift_of):
    out, n = [], 0
    for c in text:
        if c.isascii() and c.isalpha():
            base = ord("a") if c.islower() else ord("A")
            out.append(chr(base + (ord(c) - base - shift_of(n)) % 26))
            n += 1
        else:
            out.append(c)
    return "".join(out)


if m := re.search(r"shifted forward by (\d+) places", prompt):
    k = int(m.group(1))
    plain = shifted(cipher, lambda n: k)
elif m := re.search(r'begins with "([^"]+)"', prompt):
    opening = m.group(1)
    plain = next(
        p for k in range(26) if (p := shifted(cipher, lambda n, k=k: k)).startswith(opening)
    )
elif m := re.search(r'Vigenère cipher with the key "([a-z]+)"', prompt):
    key = [ord(c) - ord("a") for c in m.group(1)]
    plain = shifted(cipher, lambda n: key[n % len(key)])
else:
    lines = open("key.txt").read().splitlines()
    plain_row = lines[0].split()[-1]
    cipher_row = lines[1].split()[-1]
    table = str.maketrans(cipher_row + cipher_row.upper(), plain_row + plain_row.upper())
    plain = cipher.translate(table)

if "What is the code word" in prompt:
    print(re.search(r"The code word is ([A-Za-z]+)", plain).group(1).lower())
else:
    n = int(re.search(r"What is the (\d+)\w\w word", prompt).group(1))
    print(re.findall(r"[A-Za-z]+", plain)[n - 1].lower())
