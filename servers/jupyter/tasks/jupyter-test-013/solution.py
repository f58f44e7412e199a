import zipfile

z = zipfile.ZipFile("bundle.zip")
print(max(z.namelist(), key=lambda n: z.read(n).count(b"\n")))
