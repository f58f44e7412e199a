import os
import re

prompt = PROMPT
root = re.search(r"The folder (\S+) in your home directory", prompt).group(1)


def total(folder, keep=lambda name: True):
    return sum(
        os.path.getsize(os.path.join(here, name))
        for here, _, names in os.walk(folder)
        for name in names
        if keep(name)
    )


if m := re.search(r"with the extension (\S+) anywhere", prompt):
    ext = m.group(1).lower()
    print(total(root, lambda name: "." in name and name.rsplit(".", 1)[1].lower() == ext))
elif m := re.search(r"all files under (\S+) \(", prompt):
    print(total(m.group(1)))
else:
    folders = [d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))]
    print(max(folders, key=lambda d: total(os.path.join(root, d))))
