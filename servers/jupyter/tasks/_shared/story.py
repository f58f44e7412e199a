R = rng(101)
vocab = [
    "river",
    "stone",
    "lantern",
    "harbor",
    "meadow",
    "falcon",
    "ember",
    "willow",
    "copper",
    "thistle",
    "orchard",
    "beacon",
    "glacier",
    "maple",
    "sparrow",
    "quarry",
    "tundra",
    "velvet",
]
stop = ["the", "a", "and", "of", "to", "in", "was", "it"]
weights = {w: R.randint(1, 30) for w in vocab}
pool = [w for w in vocab for _ in range(weights[w])]
lines = []
for _ in range(400):
    words = [
        R.choice(pool) if R.random() < 0.55 else R.choice(stop) for _ in range(R.randint(6, 14))
    ]
    words[0] = words[0].capitalize()
    lines.append(" ".join(words) + R.choice([".", "!", "?", ",", ";"]))
with open("story.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
