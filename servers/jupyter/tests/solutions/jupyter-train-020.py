import statistics
print(f"{statistics.pstdev([float(l) for l in open('numbers.txt') if l.strip()]):.8f}")
