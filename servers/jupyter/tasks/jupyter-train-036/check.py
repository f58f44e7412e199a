import configparser

c = configparser.ConfigParser()
try:
    c.read("config.ini")
    ok = (
        c.get("server", "port") == "8081"
        and c.get("server", "debug").lower() == "false"
        and c.get("server", "host") == "0.0.0.0"
        and c.get("server", "workers") == "4"
        and c.get("database", "port") == "5432"
        and c.get("database", "name") == "app"
        and c.get("cache", "ttl") == "300"
    )
except configparser.Error:
    ok = False
print("PASS" if ok else "FAIL")
