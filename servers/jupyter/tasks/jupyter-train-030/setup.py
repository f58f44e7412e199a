R = rng(139)
os.makedirs("incoming", exist_ok=True)
for i in range(30):
    ext = R.choice([".log", ".txt", ".csv", ".log"])
    size = 0 if R.random() < 0.25 else R.randint(1, 200)
    with open(f"incoming/file_{i:02d}{ext}", "w") as f:
        f.write("z" * size)
