with open("big.txt", "w") as f:
    for i in range(1050):
        f.write(f"line {i:04d}: " + "x" * (i % 37) + "\n")
