R = rng(89)
authors = ["Mara Quill", "Otto Fenn", "Lia Brook", "Sam Reed"]
books = [
    {
        "title": f"Book {i}",
        "author": R.choice(authors),
        "rating": round(R.uniform(2.5, 5), 2),
        "ratings_count": R.randint(3, 5000),
    }
    for i in range(120)
]
with open("books.json", "w") as f:
    json.dump(books, f)
