R = rng(157)
with open("blob.bin", "wb") as f:
    f.write(bytes(R.randint(0, 255) for _ in range(50000)))
