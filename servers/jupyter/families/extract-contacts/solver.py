import re

prompt = PROMPT
path = re.search(r"The file (\S+) in your home directory", prompt).group(1)
text = open(path).read()

if "phone numbers does it contain" in prompt:
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
    if m := re.search(r"is exactly (\S+?)\?", prompt):
        addresses = {a for a in addresses if a.split("@")[1] == m.group(1)}
    print(len(addresses))
