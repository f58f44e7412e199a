R = rng(167)
for i in range(70):
    d = os.path.join(
        "project", R.choice(["", "src", "src/core", "src/util", "tests", "docs", ".hidden"])
    )
    os.makedirs(d, exist_ok=True)
    with open(
        os.path.join(d, f"m{i:02d}{R.choice(['.py', '.py', '.pyc', '.txt', '.pyi', '.md'])}"), "w"
    ) as f:
        f.write("# file\n")
