R = rng(103)
names = ["ana", "bo.li", "cy_r", "dee+news", "eli-k", "fay", "gus99"]
domains = ["example.com", "mail.example.org", "corp-x.net", "uni.ac.uk"]
filler = [
    "please",
    "contact",
    "regarding",
    "the",
    "invoice",
    "meeting",
    "tomorrow",
    "at",
    "noon",
    "thanks",
]
lines = []
for _ in range(150):
    parts = [R.choice(filler) for _ in range(R.randint(3, 9))]
    if R.random() < 0.6:
        addr = f"{R.choice(names)}@{R.choice(domains)}"
        if R.random() < 0.3:
            addr = addr.upper()
        parts.insert(R.randint(0, len(parts)), addr + R.choice(["", ",", ".", ";"]))
    if R.random() < 0.1:
        parts.append("not-an-email@nowhere")
    lines.append(" ".join(parts))
with open("messages.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
