//! The built-in tasks: prompts, setups and graders, as data. Every entry is exercised by
//! `tests/reference.rs`, which runs its setup and a reference solution from `tests/solutions/`
//! and grades the result: change a setup and the expected answer must change with it.
//!
//! Setups run with the working directory at the home folder, after the prelude in
//! `prelude.py` (imports of `os`, `json`, `csv`, `math`, and `rng(seed)`, a fixed generator).

use mcpgym_env::Split;

use crate::tasks::{Grader, Task, TaskKind};

/// Setup shared by several tasks: sales.csv: 240 sales (date, region, product, units, unit_price).
const SALES: &str = r##"R = rng(11)
regions = ["North", "South", "East", "West"]
products = ["anvil", "bracket", "cog", "dowel", "eyelet"]
with open("sales.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["date", "region", "product", "units", "unit_price"])
    for i in range(240):
        day = 1 + i % 28
        month = 1 + (i // 28) % 12
        w.writerow([f"2024-{month:02d}-{day:02d}", R.choice(regions), R.choice(products),
                    R.randint(1, 40), f"{R.uniform(2, 30):.2f}"])
"##;

/// Setup shared by several tasks: employees.json: 90 employees in four departments.
const EMPLOYEES: &str = r##"R = rng(23)
first = ["Ada", "Ben", "Cleo", "Dan", "Eva", "Finn", "Gia", "Hal", "Ivy", "Jon", "Kai", "Lea"]
last = ["Moss", "Nash", "Ortiz", "Park", "Quinn", "Reyes", "Stone", "Tran", "Udall", "Voss"]
depts = ["Engineering", "Sales", "Support", "Finance"]
people = []
for i in range(90):
    dept = R.choice(depts)
    base = {"Engineering": 90000, "Sales": 60000, "Support": 45000, "Finance": 70000}[dept]
    people.append({"name": f"{R.choice(first)} {R.choice(last)}", "id": 1000 + i, "dept": dept,
                   "salary": base + 500 * R.randint(0, 60), "start_year": R.randint(2005, 2023)})
with open("employees.json", "w") as f:
    json.dump({"company": "Acme", "employees": people}, f, indent=1)
"##;

/// Setup shared by several tasks: customers.csv and orders.csv: 60 customers in five countries, 300 orders.
const ORDERS: &str = r##"R = rng(31)
countries = ["Norway", "Chile", "Japan", "Kenya", "Canada"]
with open("customers.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["customer_id", "name", "country"])
    for i in range(1, 61):
        w.writerow([f"C{i:03d}", f"Customer {i}", R.choice(countries)])
with open("orders.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["order_id", "customer_id", "amount"])
    for i in range(1, 301):
        w.writerow([i, f"C{R.randint(1, 60):03d}", f"{R.uniform(5, 180):.2f}"])
"##;

/// Setup shared by several tasks: story.txt: 400 lines of prose-like text over a small vocabulary.
const STORY: &str = r##"R = rng(101)
vocab = ("river stone lantern harbor meadow falcon ember willow copper thistle orchard beacon "
         "glacier maple sparrow quarry tundra velvet").split()
stop = ["the", "a", "and", "of", "to", "in", "was", "it"]
weights = {w: R.randint(1, 30) for w in vocab}
pool = [w for w in vocab for _ in range(weights[w])]
lines = []
for i in range(400):
    words = [R.choice(pool) if R.random() < 0.55 else R.choice(stop) for _ in range(R.randint(6, 14))]
    words[0] = words[0].capitalize()
    lines.append(" ".join(words) + R.choice([".", "!", "?", ",", ";"]))
with open("story.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
"##;

/// Every built-in task, in id order within each split.
pub(crate) fn catalog() -> Vec<Task> {
    vec![
        Task::new(
            "jupyter-train-000",
            Split::Train,
            TaskKind::DataAnalysis,
            "The file sales.csv in your home directory (/home/user) has one row per sale: date, region, product, units, unit_price. What is the total revenue (units × unit_price summed) of the North region? Give the number rounded to 2 decimal places.",
            SALES,
            Grader::Numeric { value: 17758.55, rel_tol: 0.0, abs_tol: 0.01 },
        ),
        Task::new(
            "jupyter-train-001",
            Split::Train,
            TaskKind::DataAnalysis,
            "The file sales.csv in /home/user has one row per sale: date, region, product, units, unit_price. Which product sold the most units in total? Answer with the product name exactly as it appears in the file.",
            SALES,
            Grader::OneOf(vec!["dowel".into()]),
        ),
        Task::new(
            "jupyter-test-000",
            Split::Test,
            TaskKind::DataAnalysis,
            "The file sales.csv in /home/user has one row per sale: date, region, product, units, unit_price. In which month of 2024 was the revenue (units × unit_price) highest? Answer with the month's number, 1 to 12.",
            SALES,
            Grader::Numeric { value: 7.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-002",
            Split::Train,
            TaskKind::DataAnalysis,
            "The file employees.json in /home/user holds {\"company\": ..., \"employees\": [...]}, each employee with name, id, dept, salary and start_year. What is the median salary in the Engineering department?",
            EMPLOYEES,
            Grader::Numeric { value: 106000.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-test-001",
            Split::Test,
            TaskKind::DataAnalysis,
            "The file employees.json in /home/user holds {\"company\": ..., \"employees\": [...]}, each employee with name, id, dept, salary and start_year. How many employees who started before 2015 earn more than the average salary of their own department? Answer with an integer.",
            EMPLOYEES,
            Grader::Numeric { value: 25.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-003",
            Split::Train,
            TaskKind::DataAnalysis,
            "The file temperatures.csv in /home/user has columns city, day, temp_c; some readings are missing (an empty temp_c). What is the mean temperature of Oslo over the days that have a reading? Round to 2 decimal places.",
            r##"R = rng(5)
cities = {"Oslo": 4.0, "Lima": 19.0, "Cairo": 24.0, "Perth": 17.0}
with open("temperatures.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["city", "day", "temp_c"])
    for day in range(1, 61):
        for city, mean in cities.items():
            t = "" if R.random() < 0.15 else f"{mean + R.uniform(-6, 6):.1f}"
            w.writerow([city, day, t])
"##,
            Grader::Numeric { value: 4.15, rel_tol: 0.0, abs_tol: 0.01 },
        ),
        Task::new(
            "jupyter-train-004",
            Split::Train,
            TaskKind::DataAnalysis,
            "/home/user holds customers.csv (customer_id, name, country) and orders.csv (order_id, customer_id, amount). How many distinct customers from Norway placed at least one order with an amount over 100? Answer with an integer.",
            ORDERS,
            Grader::Numeric { value: 5.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-005",
            Split::Train,
            TaskKind::DataAnalysis,
            "/home/user holds customers.csv (customer_id, name, country) and orders.csv (order_id, customer_id, amount). Which country's customers spent the most in total? Answer with the country name.",
            ORDERS,
            Grader::OneOf(vec!["Japan".into()]),
        ),
        Task::new(
            "jupyter-train-006",
            Split::Train,
            TaskKind::DataAnalysis,
            "The file transactions.jsonl in /home/user has one JSON object per line: {\"account\", \"kind\", \"amount\"}, where kind is \"credit\" (adds) or \"debit\" (subtracts). Starting every account at 0, which account ends with the highest balance? Answer with the account id exactly as written (like ACC-000).",
            r##"R = rng(47)
with open("transactions.jsonl", "w") as f:
    for i in range(500):
        rec = {"account": f"ACC-{R.randint(1, 40):03d}", "kind": R.choice(["credit", "debit", "credit"]),
               "amount": round(R.uniform(1, 500), 2)}
        f.write(json.dumps(rec) + "\n")
"##,
            Grader::Exact("ACC-038".into()),
        ),
        Task::new(
            "jupyter-test-002",
            Split::Test,
            TaskKind::DataAnalysis,
            "The file grades.csv in /home/user has columns student, test1, test2, test3 (scores 0-100). How many students have an average score of at least 70 over the three tests? Answer with an integer.",
            r##"R = rng(59)
with open("grades.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["student", "test1", "test2", "test3"])
    for i in range(150):
        skill = R.randint(40, 95)
        w.writerow([f"s{i:03d}"] + [max(0, min(100, skill + R.randint(-15, 15))) for _ in range(3)])
"##,
            Grader::Numeric { value: 84.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-007",
            Split::Train,
            TaskKind::DataAnalysis,
            "The file sensor.csv in /home/user has columns timestamp (ISO 8601, like 2024-05-01T13:45:00) and reading. Which hour of the day (0-23) has the highest mean reading across all days? Answer with the hour as an integer.",
            r##"import math
R = rng(61)
with open("sensor.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["timestamp", "reading"])
    for day in range(1, 15):
        for minute in range(0, 24 * 60, 20):
            h = minute / 60
            v = 50 + 20 * math.sin((h - 11.3) / 24 * 2 * math.pi + math.pi / 2) + R.uniform(-8, 8)
            w.writerow([f"2024-05-{day:02d}T{minute // 60:02d}:{minute % 60:02d}:00", f"{v:.3f}"])
"##,
            Grader::Numeric { value: 11.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-008",
            Split::Train,
            TaskKind::DataAnalysis,
            "The file inventory.json in /home/user maps warehouse names to lists of items, each {\"sku\", \"qty\", \"price\"}. What is the total value (qty × price) of everything in warehouse \"B\"? Round to 2 decimal places.",
            r##"R = rng(67)
inv = {}
for wh in "ABC":
    inv[wh] = [{"sku": f"{wh}-{i:04d}", "qty": R.randint(0, 50), "price": round(R.uniform(0.5, 99), 2)} for i in range(R.randint(20, 40))]
with open("inventory.json", "w") as f:
    json.dump({"warehouses": inv}, f)
"##,
            Grader::Numeric { value: 50591.25, rel_tol: 0.0, abs_tol: 0.01 },
        ),
        Task::new(
            "jupyter-test-003",
            Split::Test,
            TaskKind::DataAnalysis,
            "The file survey.csv in /home/user has columns respondent, hours_online, wellbeing. What is the Pearson correlation coefficient between hours_online and wellbeing? Round to 3 decimal places.",
            r##"R = rng(71)
with open("survey.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["respondent", "hours_online", "wellbeing"])
    for i in range(200):
        h = R.uniform(0, 12)
        w.writerow([i, f"{h:.2f}", f"{70 - 2.5 * h + R.uniform(-15, 15):.2f}"])
"##,
            Grader::Numeric { value: -0.669, rel_tol: 0.0, abs_tol: 0.001 },
        ),
        Task::new(
            "jupyter-train-009",
            Split::Train,
            TaskKind::DataAnalysis,
            "The file access.log in /home/user is a web server log in the common log format (the client IP address first on each line). Which IP address made the most requests that got a 404 status? Answer with the IP address.",
            r##"R = rng(73)
ips = [f"10.0.{R.randint(0, 3)}.{R.randint(1, 254)}" for _ in range(25)]
paths = ["/", "/index.html", "/about", "/missing", "/api/v1/items", "/favicon.ico"]
with open("access.log", "w") as f:
    for i in range(800):
        status = R.choice([200, 200, 200, 304, 404, 500])
        f.write(f'{R.choice(ips)} - - [01/May/2024:10:{i // 60 % 60:02d}:{i % 60:02d} +0000] "GET {R.choice(paths)} HTTP/1.1" {status} {R.randint(100, 5000)}\n')
"##,
            Grader::Exact("10.0.0.188".into()),
        ),
        Task::new(
            "jupyter-train-010",
            Split::Train,
            TaskKind::DataAnalysis,
            "The file measurements.csv in /home/user has a header and numeric columns alpha, beta, gamma, delta. Which column has the largest population standard deviation? Answer with the column name.",
            r##"R = rng(79)
spreads = {"alpha": 3.0, "beta": 7.5, "gamma": 7.1, "delta": 5.0}
with open("measurements.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(list(spreads))
    for i in range(300):
        w.writerow([f"{100 + R.uniform(-s, s) * 1.7:.3f}" for s in spreads.values()])
"##,
            Grader::OneOf(vec!["beta".into()]),
        ),
        Task::new(
            "jupyter-train-011",
            Split::Train,
            TaskKind::DataAnalysis,
            "The gzip-compressed file events.csv.gz in /home/user has columns user, event, duration_ms. Among the rows whose event is \"checkout\", what is the mean duration_ms? Round to 1 decimal place.",
            r##"import gzip, io
R = rng(83)
f = io.StringIO(newline="")
w = csv.writer(f)
w.writerow(["user", "event", "duration_ms"])
for i in range(1000):
    w.writerow([f"u{R.randint(1, 99)}", R.choice(["view", "click", "checkout", "view"]), R.randint(20, 4000)])
# mtime=0: the gzip header would otherwise carry the time, and the setup must be byte-stable.
open("events.csv.gz", "wb").write(gzip.compress(f.getvalue().encode(), mtime=0))
"##,
            Grader::Numeric { value: 1986.5, rel_tol: 0.0, abs_tol: 0.1 },
        ),
        Task::new(
            "jupyter-test-004",
            Split::Test,
            TaskKind::DataAnalysis,
            "The file books.json in /home/user is a list of {\"title\", \"author\", \"rating\", \"ratings_count\"}. What is the average rating of Mara Quill's books, weighted by ratings_count? Round to 3 decimal places.",
            r##"R = rng(89)
authors = ["Mara Quill", "Otto Fenn", "Lia Brook", "Sam Reed"]
books = [{"title": f"Book {i}", "author": R.choice(authors), "rating": round(R.uniform(2.5, 5), 2), "ratings_count": R.randint(3, 5000)} for i in range(120)]
with open("books.json", "w") as f:
    json.dump(books, f)
"##,
            Grader::Numeric { value: 3.754, rel_tol: 0.0, abs_tol: 0.001 },
        ),
        Task::new(
            "jupyter-train-012",
            Split::Train,
            TaskKind::Numeric,
            "What is the sum of all prime numbers below 200000? Answer with an integer.",
            "",
            Grader::Numeric { value: 1709600813.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-013",
            Split::Train,
            TaskKind::Numeric,
            "How many integers from 1 to 1000000 (inclusive) have a digit sum divisible by 7? Answer with an integer.",
            "",
            Grader::Numeric { value: 142879.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-test-005",
            Split::Test,
            TaskKind::Numeric,
            "Among starting numbers below 300000, which one produces the longest Collatz sequence (n → n/2 if n is even, else 3n+1, until 1)? Answer with the starting number.",
            "",
            Grader::Numeric { value: 230631.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-014",
            Split::Train,
            TaskKind::Numeric,
            "Compute the definite integral of exp(-x**2) * cos(3*x) for x from 0 to 2. Give at least 6 significant digits.",
            "",
            Grader::Numeric { value: 0.0900092352, rel_tol: 1e-05, abs_tol: 1e-06 },
        ),
        Task::new(
            "jupyter-train-015",
            Split::Train,
            TaskKind::Numeric,
            "Find the real root of x**3 - 2*x - 5 = 0. Give it to at least 6 decimal places.",
            "",
            Grader::Numeric { value: 2.0945514815, rel_tol: 0.0, abs_tol: 1e-06 },
        ),
        Task::new(
            "jupyter-train-016",
            Split::Train,
            TaskKind::Numeric,
            "Let F(0) = 0, F(1) = 1 and F(n) = F(n-1) + F(n-2). What is F(5000) modulo 1000000007? Answer with an integer.",
            "",
            Grader::Numeric { value: 976496506.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-test-006",
            Split::Test,
            TaskKind::Numeric,
            "In how many different ways can 300 pence be made from any number of coins of 1p, 2p, 5p, 10p, 20p, 50p, 100p and 200p? (Order does not matter.) Answer with an integer.",
            "",
            Grader::Numeric { value: 471363.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-017",
            Split::Train,
            TaskKind::Numeric,
            "What is the largest eigenvalue of the symmetric matrix [[4, 1, 2], [1, 3, 0.5], [2, 0.5, 5]]? Give it to at least 4 decimal places.",
            "",
            Grader::Numeric { value: 6.83125443, rel_tol: 0.0, abs_tol: 0.0001 },
        ),
        Task::new(
            "jupyter-train-018",
            Split::Train,
            TaskKind::Numeric,
            "Five fair six-sided dice are rolled. What is the probability that their sum is exactly 17? Give it as a decimal number to at least 6 decimal places.",
            "",
            Grader::Numeric { value: 0.100308642, rel_tol: 0.0, abs_tol: 1e-06 },
        ),
        Task::new(
            "jupyter-test-007",
            Split::Test,
            TaskKind::Numeric,
            "How many trailing zeros does 2500! (2500 factorial) have in base 10? Answer with an integer.",
            "",
            Grader::Numeric { value: 624.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-019",
            Split::Train,
            TaskKind::Numeric,
            "What is the sum of the decimal digits of 7**777? Answer with an integer.",
            "",
            Grader::Numeric { value: 2989.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-020",
            Split::Train,
            TaskKind::Numeric,
            "The file numbers.txt in /home/user holds one number per line. What is the population standard deviation of these numbers? Give at least 4 decimal places.",
            r##"R = rng(97)
with open("numbers.txt", "w") as f:
    for i in range(1000):
        f.write(f"{R.uniform(-50, 150):.4f}\n")
"##,
            Grader::Numeric { value: 57.51558261, rel_tol: 1e-06, abs_tol: 0.0001 },
        ),
        Task::new(
            "jupyter-train-021",
            Split::Train,
            TaskKind::Text,
            "The file story.txt in /home/user is English-like prose. Ignoring case and punctuation, and ignoring the stopwords the, a, and, of, to, in, was, it: which word occurs most often? Answer with the word in lowercase.",
            STORY,
            Grader::OneOf(vec!["meadow".into()]),
        ),
        Task::new(
            "jupyter-test-008",
            Split::Test,
            TaskKind::Text,
            "The file story.txt in /home/user is English-like prose, one sentence per line. How many lines contain the word \"river\" as a whole word, ignoring case? Answer with an integer.",
            STORY,
            Grader::Numeric { value: 104.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-022",
            Split::Train,
            TaskKind::Text,
            "The file messages.txt in /home/user is free text with email addresses scattered through it. How many distinct email addresses does it contain, treating addresses that differ only in letter case as the same? (An address is local-part@domain, where the local part uses letters, digits, dots, underscores, plus and minus signs, and the domain is labels of letters, digits and hyphens separated by dots, ending in a label of at least two letters.) Answer with an integer.",
            r##"R = rng(103)
names = ["ana", "bo.li", "cy_r", "dee+news", "eli-k", "fay", "gus99"]
domains = ["example.com", "mail.example.org", "corp-x.net", "uni.ac.uk"]
filler = "please contact regarding the invoice meeting tomorrow at noon thanks".split()
lines = []
for i in range(150):
    parts = [R.choice(filler) for _ in range(R.randint(3, 9))]
    if R.random() < 0.6:
        addr = f"{R.choice(names)}@{R.choice(domains)}"
        if R.random() < 0.3:
            addr = addr.upper()
        parts.insert(R.randint(0, len(parts)), addr + R.choice(["", ",", ".", ";"]))
    if R.random() < 0.1:
        parts.append("not-an-email@nowhere")
    lines.append(" ".join(parts))
with open("messages.txt", "w") as f:
    f.write("\n".join(lines) + "\n")
"##,
            Grader::Numeric { value: 26.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-023",
            Split::Train,
            TaskKind::Text,
            "The file cipher.txt in /home/user holds an English sentence encrypted with a Caesar cipher (every letter shifted by the same unknown amount; everything else unchanged). Decrypt it. What is the last word of the plaintext? Answer with that word in lowercase, without punctuation.",
            r##"plain = "The quick analyst verified every number before trusting the final spreadsheet"
shift = 11
out = "".join(chr((ord(c) - base + shift) % 26 + base) if c.isalpha() else c
              for c in plain for base in [65 if c.isupper() else 97])
with open("cipher.txt", "w") as f:
    f.write(out + ".\n")
"##,
            Grader::OneOf(vec!["spreadsheet".into()]),
        ),
        Task::new(
            "jupyter-test-009",
            Split::Test,
            TaskKind::Text,
            "The file words.txt in /home/user lists one word per line. What is the longest word that is a palindrome (reads the same backwards, ignoring case)? Answer with the word in lowercase.",
            r##"R = rng(107)
pals = ["level", "racecar", "rotator", "civic", "kayak", "deified", "redivider", "noon"]
other = ["planet", "orange", "silver", "harbour", "garden", "quantum", "reverse", "pineapple", "calendar"]
words = pals + other * 3
out = []
for i in range(len(words)):
    out.append(words[R.randint(0, len(words) - 1)])
out += pals
out = [w.capitalize() if R.random() < 0.3 else w for w in out]
with open("words.txt", "w") as f:
    f.write("\n".join(out) + "\n")
"##,
            Grader::OneOf(vec!["redivider".into()]),
        ),
        Task::new(
            "jupyter-train-024",
            Split::Train,
            TaskKind::Text,
            "The file wordlist.txt in /home/user lists one lowercase word per line. Group the words into anagram classes (words made of the same letters). How many classes have 3 or more distinct words? Answer with an integer.",
            r##"R = rng(109)
groups = [["listen", "silent", "enlist", "tinsel"], ["stone", "notes", "onset", "tones"], ["evil", "vile", "live"],
          ["angle", "glean"], ["earth", "heart", "hater"], ["rat", "tar", "art"], ["dusty", "study"],
          ["care", "race", "acre"], ["below", "elbow", "bowel"], ["inch", "chin"], ["lemon", "melon"], ["pots", "stop", "tops", "spot"]]
words = [w for g in groups for w in g] + ["solo", "zebra", "quiet", "mango", "pluck"]
words += words[:6]
order = sorted(range(len(words)), key=lambda i: R.next())
with open("wordlist.txt", "w") as f:
    f.write("\n".join(words[i] for i in order) + "\n")
"##,
            Grader::Numeric { value: 8.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-025",
            Split::Train,
            TaskKind::Text,
            "The file diary.txt in /home/user has one event per line as \"DATE | text\", with dates written in different formats (2024-03-09, 09/03/2024 meaning day/month/year, March 9, 2024, and 9 Mar 2024). How many of the events fall on a Saturday? Answer with an integer.",
            r##"import datetime
R = rng(113)
out = []
start = datetime.date(2024, 1, 1)
for i in range(120):
    d = start + datetime.timedelta(days=R.randint(0, 365))
    fmt = R.randint(0, 3)
    if fmt == 0: s = d.isoformat()
    elif fmt == 1: s = f"{d.day:02d}/{d.month:02d}/{d.year}"
    elif fmt == 2: s = f"{['January','February','March','April','May','June','July','August','September','October','November','December'][d.month - 1]} {d.day}, {d.year}"
    else: s = f"{d.day} {['Jan','Feb','Mar','Apr','May','Jun','Jul','Aug','Sep','Oct','Nov','Dec'][d.month - 1]} {d.year}"
    out.append(f"{s} | event number {i}")
with open("diary.txt", "w") as f:
    f.write("\n".join(out) + "\n")
"##,
            Grader::Numeric { value: 10.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-test-010",
            Split::Test,
            TaskKind::Text,
            "The file report.txt in /home/user is prose that mentions many whole numbers (some negative, written with a leading minus sign like -12; some with thousands separators like 1,250). What is the sum of all the numbers in it? Answer with an integer.",
            r##"R = rng(127)
words = "the team shipped units while costs were adjusted by and the balance moved to".split()
out = []
for i in range(80):
    parts = [R.choice(words) for _ in range(R.randint(4, 10))]
    for _ in range(R.randint(1, 3)):
        n = R.randint(-500, 5000)
        s = f"{n:,}" if abs(n) >= 1000 and R.random() < 0.7 else str(n)
        parts.insert(R.randint(0, len(parts)), s)
    out.append(" ".join(parts) + ".")
with open("report.txt", "w") as f:
    f.write("\n".join(out) + "\n")
"##,
            Grader::Numeric { value: 345681.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-026",
            Split::Train,
            TaskKind::Text,
            "The file pair.txt in /home/user holds two lines of text. What is the Levenshtein edit distance (insertions, deletions and substitutions each cost 1) between the two lines, without their line endings? Answer with an integer.",
            r##"with open("pair.txt", "w") as f:
    f.write("the gradient of the loss vanished after the seventh epoch\n")
    f.write("a gradient for this loss exploded before the seventeenth epoch began\n")
"##,
            Grader::Numeric { value: 28.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-train-027",
            Split::Train,
            TaskKind::Text,
            "The file lines.txt in /home/user has several lines of lowercase words separated by spaces. Exactly one word appears in every line. Which word is it? Answer with the word in lowercase.",
            r##"R = rng(131)
vocab = "amber basalt cobalt dune fjord grove heron iris jasper kelp lichen".split()
out = []
for i in range(30):
    ws = [R.choice(vocab) for _ in range(R.randint(3, 8))] + ["mosaic"]
    ws = [w for w in ws if not (i % 11 == 0 and w == "amber")]
    order = sorted(range(len(ws)), key=lambda k: R.next())
    out.append(" ".join(ws[k] for k in order))
with open("lines.txt", "w") as f:
    f.write("\n".join(out) + "\n")
"##,
            Grader::OneOf(vec!["mosaic".into()]),
        ),
        Task::new(
            "jupyter-train-028",
            Split::Train,
            TaskKind::Files,
            "The file sales.csv in /home/user has one row per sale: date, region, product, units, unit_price. Write /home/user/region_totals.csv with a header row \"region,revenue\" and one row per region, sorted by region name, where revenue is the sum of units × unit_price rounded to 2 decimal places. Then call final_answer with the path of the file you wrote.",
            SALES,
            Grader::Check { code: r##"import csv, collections
t = collections.defaultdict(float)
for r in csv.DictReader(open(os.path.join(ORIGINAL, "sales.csv"))):
    t[r["region"]] += int(r["units"]) * float(r["unit_price"])
try:
    rows = list(csv.reader(open("region_totals.csv", newline="")))
except OSError:
    rows = None
if not rows or [c.strip().lower() for c in rows[0]] != ["region", "revenue"]:
    print("FAIL: missing file or wrong header")
elif [r[0] for r in rows[1:] if r] != sorted(t):
    print("FAIL: regions missing or not sorted")
elif all(abs(float(r[1]) - t[r[0]]) <= 0.01 for r in rows[1:] if r):
    print("PASS")
else:
    print("FAIL: wrong revenue")
"##.into() },
        ),
        Task::new(
            "jupyter-train-029",
            Split::Train,
            TaskKind::Files,
            "The file people.json in /home/user is a list of objects with keys name, age, city (some objects also have other keys). Write /home/user/people.csv: a header row \"name,age,city\" and one row per object in the same order, with only those three columns. Then call final_answer with the path of the file you wrote.",
            r##"R = rng(137)
people = []
for i in range(40):
    p = {"name": f"Person {i}", "age": R.randint(18, 90), "city": R.choice(["Rome", "Lagos", "Quito, EC", "Oslo"])}
    if R.random() < 0.3:
        p["email"] = f"p{i}@example.com"
    people.append(p)
with open("people.json", "w") as f:
    json.dump(people, f)
"##,
            Grader::Check { code: r##"import csv, json
want = [[p["name"], str(p["age"]), p["city"]] for p in json.load(open(os.path.join(ORIGINAL, "people.json")))]
try:
    rows = [r for r in csv.reader(open("people.csv", newline="")) if r]
except OSError:
    rows = []
print("PASS" if rows and rows[0] == ["name", "age", "city"] and rows[1:] == want else "FAIL")
"##.into() },
        ),
        Task::new(
            "jupyter-test-011",
            Split::Test,
            TaskKind::Files,
            "The file big.txt in /home/user has 1,050 lines. Split it into files of at most 100 lines each, named /home/user/chunks/chunk_01.txt, chunk_02.txt, ... in order, so that concatenating them gives back big.txt exactly. Then call final_answer with the number of chunk files you wrote.",
            r##"with open("big.txt", "w") as f:
    for i in range(1050):
        f.write(f"line {i:04d}: " + "x" * (i % 37) + "\n")
"##,
            Grader::Check { code: r##"import os
names = sorted(os.listdir("chunks")) if os.path.isdir("chunks") else []
expected = [f"chunk_{i:02d}.txt" for i in range(1, 12)]
ok = names == expected
if ok:
    parts = [open(os.path.join("chunks", n), "rb").read() for n in names]
    ok = b"".join(parts) == open(os.path.join(ORIGINAL, "big.txt"), "rb").read() and all(p.count(b"\n") <= 100 for p in parts)
print("PASS" if ok and ANSWER.strip().rstrip(".") == "11" else "FAIL")
"##.into() },
        ),
        Task::new(
            "jupyter-train-030",
            Split::Train,
            TaskKind::Files,
            "The folder /home/user/incoming holds a mix of files. Move every file whose name ends in .log into a new folder /home/user/logs (keeping the names), and delete every file in incoming that is empty (0 bytes); leave everything else where it is. Then call final_answer with the word done.",
            r##"R = rng(139)
os.makedirs("incoming", exist_ok=True)
for i in range(30):
    ext = R.choice([".log", ".txt", ".csv", ".log"])
    size = 0 if R.random() < 0.25 else R.randint(1, 200)
    with open(f"incoming/file_{i:02d}{ext}", "w") as f:
        f.write("z" * size)
"##,
            Grader::Check { code: r##"want_in, want_logs = set(), set()
for name in os.listdir(os.path.join(ORIGINAL, "incoming")):
    size = os.path.getsize(os.path.join(ORIGINAL, "incoming", name))
    if size:
        (want_logs if name.endswith(".log") else want_in).add((name, size))
def listing(d):
    if not os.path.isdir(d):
        return None
    return {(n, os.path.getsize(os.path.join(d, n))) for n in os.listdir(d)}
print("PASS" if listing("incoming") == want_in and listing("logs") == want_logs else "FAIL")
"##.into() },
        ),
        Task::new(
            "jupyter-train-031",
            Split::Train,
            TaskKind::Files,
            "The file values.txt in /home/user holds one number per line. Write /home/user/summary.json, a JSON object with keys \"count\" (how many numbers), \"mean\" and \"max\" (numbers, not strings). Then call final_answer with the path of the file you wrote.",
            r##"R = rng(149)
with open("values.txt", "w") as f:
    for i in range(R.randint(200, 300)):
        f.write(f"{R.uniform(-20, 80):.3f}\n")
"##,
            Grader::Check { code: r##"import json
v = [float(l) for l in open(os.path.join(ORIGINAL, "values.txt")) if l.strip()]
try:
    s = json.load(open("summary.json"))
except (OSError, ValueError):
    s = None
ok = isinstance(s, dict) and all(isinstance(s.get(k), (int, float)) and not isinstance(s.get(k), bool) for k in ("count", "mean", "max"))
ok = ok and s["count"] == len(v) and abs(s["mean"] - sum(v) / len(v)) <= 1e-3 and abs(s["max"] - max(v)) <= 1e-3
print("PASS" if ok else "FAIL")
"##.into() },
        ),
        Task::new(
            "jupyter-train-032",
            Split::Train,
            TaskKind::Files,
            "The folder /home/user/archive holds many files in nested folders. Which file is the largest (in bytes)? Answer with its path relative to /home/user/archive, using forward slashes (like a/b.txt).",
            r##"R = rng(151)
for i in range(40):
    d = os.path.join("archive", R.choice(["", "2023", "2024", "2024/q1", "misc/old"]))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"doc_{i:02d}.{R.choice(['txt', 'bin', 'dat'])}"), "w") as f:
        f.write("q" * R.randint(100, 90000))
"##,
            // The same file named from the archive, from the home folder, or absolutely.
            Grader::OneOf(vec![
                "2023/doc_11.txt".into(),
                "./2023/doc_11.txt".into(),
                "archive/2023/doc_11.txt".into(),
                "/home/user/archive/2023/doc_11.txt".into(),
            ]),
        ),
        Task::new(
            "jupyter-test-012",
            Split::Test,
            TaskKind::Files,
            "What is the SHA-256 digest of the file blob.bin in /home/user? Answer with the 64 hexadecimal digits in lowercase.",
            r##"R = rng(157)
with open("blob.bin", "wb") as f:
    f.write(bytes(R.randint(0, 255) for _ in range(50000)))
"##,
            Grader::Exact("7c9d2fbe83ad4cd5f4168b35a92dffdb93d6a17dc2a86e8aa31380a2737d95d3".into()),
        ),
        Task::new(
            "jupyter-train-033",
            Split::Train,
            TaskKind::Files,
            "The file contacts.csv in /home/user (columns name, email, phone) has duplicate contacts: rows whose email addresses are the same ignoring case and surrounding spaces. Write /home/user/contacts_clean.csv with the same header, keeping only the first row of each email address, in the original order, with the rows otherwise unchanged. Then call final_answer with the number of rows (excluding the header) in your file.",
            r##"R = rng(163)
base = [(f"Name {i}", f"user{i}@example.com", f"+1-555-{R.randint(1000, 9999)}") for i in range(50)]
rows = []
for i in range(90):
    n, e, p = R.choice(base)
    if R.random() < 0.3: e = e.upper()
    if R.random() < 0.2: e = " " + e + " "
    rows.append([n, e, p])
with open("contacts.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["name", "email", "phone"])
    w.writerows(rows)
"##,
            Grader::Check { code: r##"import csv
rows = list(csv.reader(open(os.path.join(ORIGINAL, "contacts.csv"), newline="")))
seen, want = set(), [rows[0]]
for r in rows[1:]:
    k = r[1].strip().lower()
    if k not in seen:
        seen.add(k)
        want.append(r)
try:
    got = [r for r in csv.reader(open("contacts_clean.csv", newline="")) if r]
except OSError:
    got = None
print("PASS" if got == want and ANSWER.strip().rstrip(".") == str(len(want) - 1) else "FAIL")
"##.into() },
        ),
        Task::new(
            "jupyter-train-034",
            Split::Train,
            TaskKind::Files,
            "The folder /home/user/project is a source tree. How many files with the extension .py does it contain, counting all subfolders (but not files like .pyc or .pyi)? Answer with an integer.",
            r##"R = rng(167)
for i in range(70):
    d = os.path.join("project", R.choice(["", "src", "src/core", "src/util", "tests", "docs", ".hidden"]))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"m{i:02d}{R.choice(['.py', '.py', '.pyc', '.txt', '.pyi', '.md'])}"), "w") as f:
        f.write("# file\n")
"##,
            Grader::Numeric { value: 20.0, rel_tol: 0.0, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-test-013",
            Split::Test,
            TaskKind::Files,
            "The zip archive bundle.zip in /home/user contains several text files. Which file inside it has the most lines? Answer with its name as stored in the archive.",
            r##"import zipfile
R = rng(173)
with zipfile.ZipFile("bundle.zip", "w") as z:
    for name in ["alpha.txt", "notes/beta.txt", "gamma.txt", "notes/delta.txt", "epsilon.txt"]:
        # A fixed date: writestr(name, …) would stamp the current time and make the bytes vary.
        z.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), "".join(f"row {i}\n" for i in range(R.randint(10, 400))))
"##,
            Grader::Exact("notes/delta.txt".into()),
        ),
        Task::new(
            "jupyter-train-035",
            Split::Train,
            TaskKind::Files,
            "Using the data in /home/user/sales.csv (date, region, product, units, unit_price), draw a bar chart of the total units sold per product and save it as a PNG image at /home/user/units.png, at least 400 pixels wide. Then call final_answer with the path of the image.",
            SALES,
            Grader::Check { code: r##"import struct
try:
    head = open("units.png", "rb").read(32)
except OSError:
    head = b""
ok = head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR" and struct.unpack(">I", head[16:20])[0] >= 400
print("PASS" if ok else "FAIL")
"##.into() },
        ),
        Task::new(
            "jupyter-train-036",
            Split::Train,
            TaskKind::Files,
            "The file config.ini in /home/user is an INI file. Change the value of \"port\" in the [server] section to 8081 and add a key \"debug = false\" to the [server] section, keeping all other sections and keys. Then call final_answer with the word done.",
            r##"with open("config.ini", "w") as f:
    f.write("[server]\nhost = 0.0.0.0\nport = 8080\nworkers = 4\n\n[database]\nport = 5432\nname = app\n\n[cache]\nttl = 300\n")
"##,
            Grader::Check { code: r##"import configparser
c = configparser.ConfigParser()
try:
    c.read("config.ini")
    ok = (c.get("server", "port") == "8081" and c.get("server", "debug").lower() == "false"
          and c.get("server", "host") == "0.0.0.0" and c.get("server", "workers") == "4"
          and c.get("database", "port") == "5432" and c.get("database", "name") == "app"
          and c.get("cache", "ttl") == "300")
except configparser.Error:
    ok = False
print("PASS" if ok else "FAIL")
"##.into() },
        ),
        Task::new(
            "jupyter-train-037",
            Split::Train,
            TaskKind::Numeric,
            "The file matrix.csv in /home/user is a 6×6 matrix of numbers with no header. What is its determinant? Give at least 6 significant digits.",
            r##"R = rng(179)
with open("matrix.csv", "w", newline="") as f:
    w = csv.writer(f)
    for i in range(6):
        w.writerow([R.randint(-9, 9) for _ in range(6)])
"##,
            Grader::Numeric { value: -130050.0, rel_tol: 1e-06, abs_tol: 0.0 },
        ),
        Task::new(
            "jupyter-test-014",
            Split::Test,
            TaskKind::Text,
            "The file titles.txt in /home/user lists book titles, one per line. Convert each title to a URL slug: lowercase, every run of characters that are not letters a-z or digits replaced by a single hyphen, and no hyphen at either end. Which slug comes first in alphabetical (ASCII) order? Answer with the slug.",
            r##"titles = ["The Art of War", "  Zen & the Art of Motorcycle Maintenance", "1984", "A Tale of Two Cities!",
          "Brave New World", "...And Then There Were None", "Catch-22", "a room of one's own"]
with open("titles.txt", "w") as f:
    f.write("\n".join(titles) + "\n")
"##,
            Grader::Exact("1984".into()),
        ),
    ]
}
