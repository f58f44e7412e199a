R = rng(107)
pals = ["level", "racecar", "rotator", "civic", "kayak", "deified", "redivider", "noon"]
other = [
    "planet",
    "orange",
    "silver",
    "harbour",
    "garden",
    "quantum",
    "reverse",
    "pineapple",
    "calendar",
]
words = pals + other * 3
out = []
for _ in range(len(words)):
    out.append(words[R.randint(0, len(words) - 1)])
out += pals
out = [w.capitalize() if R.random() < 0.3 else w for w in out]
with open("words.txt", "w") as f:
    f.write("\n".join(out) + "\n")
