print(sum(1 for i in range(1, 1000001) if sum(map(int, str(i))) % 7 == 0))
