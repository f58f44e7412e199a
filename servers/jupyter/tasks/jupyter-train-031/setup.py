R = rng(149)
with open("values.txt", "w") as f:
    for _ in range(R.randint(200, 300)):
        f.write(f"{R.uniform(-20, 80):.3f}\n")
