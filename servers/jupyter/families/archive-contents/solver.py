import csv
import io
import re
import tarfile
import zipfile

prompt = PROMPT
archive = re.search(r"The file (\S+) in your home directory", prompt).group(1)


def members():
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            for name in z.namelist():
                yield name, z.read(name)
    else:
        with tarfile.open(archive) as t:
            for m in t.getmembers():
                if m.isfile():
                    yield m.name, t.extractfile(m).read()


rows = []
for name, data in members():
    if name.endswith(".csv"):
        rows.extend(csv.DictReader(io.StringIO(data.decode())))
region = m.group(1) if (m := re.search(r"whose region is (\S+),", prompt)) else None
amounts = [float(r["amount"]) for r in rows if region is None or r["region"] == region]
if "What is the mean" in prompt:
    print(f"{sum(amounts) / len(amounts):.2f}")
else:
    print(f"{sum(amounts):.2f}")
