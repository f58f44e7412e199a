text = open("cipher.txt").read()


def dec(s, k):
    return "".join(
        chr((ord(c) - b - k) % 26 + b) if c.isalpha() else c
        for c in s
        for b in [65 if c.isupper() else 97]
    )


best = max(
    range(26), key=lambda k: sum(dec(text, k).lower().count(w) for w in [" the ", " and ", "e"])
)
print(dec(text, best).strip().rstrip(".").split()[-1].lower())
