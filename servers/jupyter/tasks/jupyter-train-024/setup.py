R = rng(109)
groups = [
    ["listen", "silent", "enlist", "tinsel"],
    ["stone", "notes", "onset", "tones"],
    ["evil", "vile", "live"],
    ["angle", "glean"],
    ["earth", "heart", "hater"],
    ["rat", "tar", "art"],
    ["dusty", "study"],
    ["care", "race", "acre"],
    ["below", "elbow", "bowel"],
    ["inch", "chin"],
    ["lemon", "melon"],
    ["pots", "stop", "tops", "spot"],
]
words = [w for g in groups for w in g] + ["solo", "zebra", "quiet", "mango", "pluck"]
words += words[:6]
order = sorted(range(len(words)), key=lambda i: R.next())
with open("wordlist.txt", "w") as f:
    f.write("\n".join(words[i] for i in order) + "\n")
