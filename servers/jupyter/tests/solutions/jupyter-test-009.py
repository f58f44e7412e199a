w = [l.strip().lower() for l in open("words.txt") if l.strip()]
print(max((x for x in w if x == x[::-1]), key=len))
