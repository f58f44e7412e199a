R = rng(151)
for i in range(40):
    d = os.path.join("archive", R.choice(["", "2023", "2024", "2024/q1", "misc/old"]))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"doc_{i:02d}.{R.choice(['txt', 'bin', 'dat'])}"), "w") as f:
        f.write("q" * R.randint(100, 90000))
