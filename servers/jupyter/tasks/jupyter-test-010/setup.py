R = rng(127)
words = [
    "the",
    "team",
    "shipped",
    "units",
    "while",
    "costs",
    "were",
    "adjusted",
    "by",
    "and",
    "the",
    "balance",
    "moved",
    "to",
]
out = []
for _ in range(80):
    parts = [R.choice(words) for _ in range(R.randint(4, 10))]
    for _ in range(R.randint(1, 3)):
        n = R.randint(-500, 5000)
        s = f"{n:,}" if abs(n) >= 1000 and R.random() < 0.7 else str(n)
        parts.insert(R.randint(0, len(parts)), s)
    out.append(" ".join(parts) + ".")
with open("report.txt", "w") as f:
    f.write("\n".join(out) + "\n")
