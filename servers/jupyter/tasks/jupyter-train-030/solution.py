import os
import shutil

os.makedirs("logs", exist_ok=True)
for n in sorted(os.listdir("incoming")):
    p = os.path.join("incoming", n)
    if os.path.getsize(p) == 0:
        os.remove(p)
    elif n.endswith(".log"):
        shutil.move(p, os.path.join("logs", n))
print("done")
