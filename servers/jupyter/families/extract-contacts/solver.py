import os
import re

prompt = PROMPT
if m := re.search(r"the folder (\S+?)[ ,]", prompt, re.IGNORECASE):
    text = ""
    for here, _, names in os.walk(m.group(1)):
        for name in names:
            if name.endswith(".txt"):
                text += open(os.path.join(here, name)).read() + "\n"
else:
    path = re.search(r"the file (\S+?)[ ,]", prompt, re.IGNORECASE).group(1)
    text = open(path).read()
# Addresses written out against harvesters: "[at]", "(at)", "[dot]", "(dot)".
text = re.sub(r"\s*[\[(]at[\])]\s*", "@", text)
text = re.sub(r"\s*[\[(]dot[\])]\s*", ".", text)

if "distinct phone numbers" in prompt:
    # A number: optional country code, then 3-3-4 digits with optional separators.
    pattern = re.compile(
        r"(?<![\w#-])(?:\+?1[ -])?\(?(\d{3})\)?[ .-]?(\d{3})[ .-]?(\d{4})(?![\w-])"
    )
    found = {"".join(m.groups()) for m in pattern.finditer(text)}
    print(len(found))
else:
    addresses = {
        m.group(0).lower()
        for m in re.finditer(r"[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+", text)
    }
    if m := re.search(r"is exactly ([\w.-]+?)[?.]\s", prompt):
        addresses = {a for a in addresses if a.split("@")[1] == m.group(1)}
    print(len(addresses))
