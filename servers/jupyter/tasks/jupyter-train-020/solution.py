import statistics

print(f"{statistics.pstdev([float(line) for line in open('numbers.txt') if line.strip()]):.8f}")
