R = rng(137)
people = []
for i in range(40):
    p = {
        "name": f"Person {i}",
        "age": R.randint(18, 90),
        "city": R.choice(["Rome", "Lagos", "Quito, EC", "Oslo"]),
    }
    if R.random() < 0.3:
        p["email"] = f"p{i}@example.com"
    people.append(p)
with open("people.json", "w") as f:
    json.dump(people, f)
