import os
import re

prompt = PROMPT
root = re.search(r"the folder (\S+?)[ ,]", prompt, re.IGNORECASE).group(1)


def total(folder: str, keep=lambda name: True) -> int:
    """Bytes of the files under `folder` whose name `keep` accepts; links neither counted nor
    followed."""
    return sum(
        os.path.getsize(path)
        for here, _, names in os.walk(folder)
        for name in names
        if keep(name) and not os.path.islink(path := os.path.join(here, name))
    )


if m := re.search(r"with the extension (\S+) anywhere", prompt):
    ext = m.group(1).lower()
    print(total(root, lambda name: "." in name and name.rsplit(".", 1)[1].lower() == ext))
elif m := re.search(r"all files under (\S+) \(", prompt):
    print(total(m.group(1)))
else:
    folders = [
        d
        for d in os.listdir(root)
        if os.path.isdir(os.path.join(root, d)) and not os.path.islink(os.path.join(root, d))
    ]
    print(max(folders, key=lambda d: total(os.path.join(root, d))))
