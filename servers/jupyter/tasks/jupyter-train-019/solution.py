print(sum(map(int, str(7**777))))
