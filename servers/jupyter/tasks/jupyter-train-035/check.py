import struct

try:
    head = open("units.png", "rb").read(32)
except OSError:
    head = b""
ok = (
    head[:8] == b"\x89PNG\r\n\x1a\n"
    and head[12:16] == b"IHDR"
    and struct.unpack(">I", head[16:20])[0] >= 400
)
print("PASS" if ok else "FAIL")
