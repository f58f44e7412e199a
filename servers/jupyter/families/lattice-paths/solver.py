import re

modulus = int(re.search(r"modulo (\d+)", PROMPT).group(1))
if m := re.search(r"The file (\S+) in your home", PROMPT):
    wall = re.search(r"'(.)' a blocked one", PROMPT).group(1)
    lines = open(m.group(1)).read().split()
    diagonal = "diagonally" in PROMPT
    rows, cols = len(lines), len(lines[0])
    ways = [[0] * cols for _ in range(rows)]
    for r in range(rows):
        for c in range(cols):
            if lines[r][c] == wall:
                continue
            if r == 0 and c == 0:
                ways[r][c] = 1
                continue
            total = (ways[r - 1][c] if r else 0) + (ways[r][c - 1] if c else 0)
            if diagonal and r and c:
                total += ways[r - 1][c - 1]
            ways[r][c] = total % modulus
    answer = ways[-1][-1]
else:
    values = [int(v) for v in re.search(r"denominations ([\d, ]+?) \(", PROMPT).group(1).split(",")]
    amount = int(re.search(r"amount of exactly (\d+)", PROMPT).group(1))
    limited = re.search(r"at most (\d+) coins of (\d+)", PROMPT)
    free = [v for v in values if not (limited and v == int(limited.group(2)))]
    ways = [1] + [0] * amount
    for coin in free:
        for total in range(coin, amount + 1):
            ways[total] = (ways[total] + ways[total - coin]) % modulus
    if limited:
        limit, coin = int(limited.group(1)), int(limited.group(2))
        answer = sum(ways[amount - k * coin] for k in range(limit + 1) if k * coin <= amount)
        answer %= modulus
    else:
        answer = ways[amount]
print(answer)
