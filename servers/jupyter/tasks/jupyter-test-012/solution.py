import hashlib

print(hashlib.sha256(open("blob.bin", "rb").read()).hexdigest())
