R = rng(23)
first = ["Ada", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gia", "Hal", "Ivy", "Jon", "Kai", "Lea"]
last = ["Moss", "Nash", "Ortiz", "Park", "Quinn", "Reyes", "Stone", "Tran", "Udall", "Voss"]
depts = ["Engineering", "Sales", "Support", "Finance"]
people = []
for i in range(90):
    dept = R.choice(depts)
    base = {"Engineering": 90000, "Sales": 60000, "Support": 45000, "Finance": 70000}[dept]
    people.append(
        {
            "name": f"{R.choice(first)} {R.choice(last)}",
            "id": 1000 + i,
            "dept": dept,
            "salary": base + 500 * R.randint(0, 60),
            "start_year": R.randint(2005, 2023),
        }
    )
with open("employees.json", "w") as f:
    json.dump({"company": "Acme", "employees": people}, f, indent=1)
