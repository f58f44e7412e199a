import os
import re

prompt = PROMPT
if m := re.search(r"The folder (\S+) in your home directory holds a message cut into", prompt):
    folder = m.group(1)
    parts = sorted(os.listdir(folder), key=lambda name: int(re.search(r"\d+", name).group()))
    cipher = "".join(open(os.path.join(folder, part), encoding="utf-8").read() for part in parts)
else:
    path = re.search(r"the file (\S+?)[ ,]", prompt, re.IGNORECASE).group(1)
    cipher = open(path, encoding="utf-8").read()


def shifted(text: str, shift_of) -> str:
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

if m := re.search(r"the (\d+)\w\w word of the decrypted message", prompt):
    print(re.findall(r"[A-Za-z]+", plain)[int(m.group(1)) - 1].lower())
else:
    print(re.search(r"The code word is ([A-Za-z]+)", plain).group(1).lower())
