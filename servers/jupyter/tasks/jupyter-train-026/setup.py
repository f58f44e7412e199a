with open("pair.txt", "w") as f:
    f.write("the gradient of the loss vanished after the seventh epoch\n")
    f.write("a gradient for this loss exploded before the seventeenth epoch began\n")
