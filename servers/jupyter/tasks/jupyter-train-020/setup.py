R = rng(97)
with open("numbers.txt", "w") as f:
    for _ in range(1000):
        f.write(f"{R.uniform(-50, 150):.4f}\n")
