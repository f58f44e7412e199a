import os

lines = open("big.txt").readlines()
os.makedirs("chunks", exist_ok=True)
n = 0
for i in range(0, len(lines), 100):
    n += 1
    with open(f"chunks/chunk_{n:02d}.txt", "w") as f:
        f.writelines(lines[i : i + 100])
print(n)
