with open("config.ini", "w") as f:
    f.write(
        "[server]\nhost = 0.0.0.0\nport = 8080\nworkers = 4\n\n"
        "[database]\nport = 5432\nname = app\n\n"
        "[cache]\nttl = 300\n"
    )
