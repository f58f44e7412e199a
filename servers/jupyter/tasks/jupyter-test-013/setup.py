import zipfile

R = rng(173)
with zipfile.ZipFile("bundle.zip", "w") as z:
    for name in ["alpha.txt", "notes/beta.txt", "gamma.txt", "notes/delta.txt", "epsilon.txt"]:
        # A fixed date: writestr(name, …) would stamp the current time and make the bytes vary.
        z.writestr(
            zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)),
            "".join(f"row {i}\n" for i in range(R.randint(10, 400))),
        )
