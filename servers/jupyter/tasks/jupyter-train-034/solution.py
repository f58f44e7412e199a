import os

print(sum(1 for r, _, fs in os.walk("project") for n in fs if n.endswith(".py")))
