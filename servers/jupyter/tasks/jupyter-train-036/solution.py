import configparser

c = configparser.ConfigParser()
c.read("config.ini")
c["server"]["port"] = "8081"
c["server"]["debug"] = "false"
with open("config.ini", "w") as f:
    c.write(f)
print("done")
