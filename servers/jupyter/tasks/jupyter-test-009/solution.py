w = [line.strip().lower() for line in open("words.txt") if line.strip()]
print(max((x for x in w if x == x[::-1]), key=len))
