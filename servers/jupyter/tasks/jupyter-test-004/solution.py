import json

b = [x for x in json.load(open("books.json")) if x["author"] == "Mara Quill"]
print(
    f"{sum(x['rating'] * x['ratings_count'] for x in b) / sum(x['ratings_count'] for x in b):.3f}"
)
