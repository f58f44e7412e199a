titles = [
    "The Art of War",
    "  Zen & the Art of Motorcycle Maintenance",
    "1984",
    "A Tale of Two Cities!",
    "Brave New World",
    "...And Then There Were None",
    "Catch-22",
    "a room of one's own",
]
with open("titles.txt", "w") as f:
    f.write("\n".join(titles) + "\n")
