R = rng(73)
ips = [f"10.0.{R.randint(0, 3)}.{R.randint(1, 254)}" for _ in range(25)]
paths = ["/", "/index.html", "/about", "/missing", "/api/v1/items", "/favicon.ico"]
with open("access.log", "w") as f:
    for i in range(800):
        status = R.choice([200, 200, 200, 304, 404, 500])
        # Drawn in this order: the file, and so the answer, depends on it.
        ip, path, size = R.choice(ips), R.choice(paths), R.randint(100, 5000)
        when = f"01/May/2024:10:{i // 60 % 60:02d}:{i % 60:02d} +0000"
        f.write(f'{ip} - - [{when}] "GET {path} HTTP/1.1" {status} {size}\n')
