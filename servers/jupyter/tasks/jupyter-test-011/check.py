import os

names = sorted(os.listdir("chunks")) if os.path.isdir("chunks") else []
expected = [f"chunk_{i:02d}.txt" for i in range(1, 12)]
ok = names == expected
if ok:
    parts = [open(os.path.join("chunks", n), "rb").read() for n in names]
    ok = b"".join(parts) == open(os.path.join(ORIGINAL, "big.txt"), "rb").read() and all(
        p.count(b"\n") <= 100 for p in parts
    )
print("PASS" if ok and ANSWER.strip().rstrip(".") == "11" else "FAIL")
