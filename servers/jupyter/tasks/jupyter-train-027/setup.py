R = rng(131)
vocab = [
    "amber",
    "basalt",
    "cobalt",
    "dune",
    "fjord",
    "grove",
    "heron",
    "iris",
    "jasper",
    "kelp",
    "lichen",
]
out = []
for i in range(30):
    ws = [R.choice(vocab) for _ in range(R.randint(3, 8))] + ["mosaic"]
    ws = [w for w in ws if not (i % 11 == 0 and w == "amber")]
    order = sorted(range(len(ws)), key=lambda k: R.next())
    out.append(" ".join(ws[k] for k in order))
with open("lines.txt", "w") as f:
    f.write("\n".join(out) + "\n")
