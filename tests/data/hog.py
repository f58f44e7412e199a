# Forks children that sleep until the kernel refuses another, then opens inotify instances
# until it refuses, and prints both counts: a jail taking every process and inotify instance
# it can, and keeping them (the children sleep; the instances stay open while this process
# lives, so a caller that must keep them appends a sleep).
import ctypes
import os
import time

libc = ctypes.CDLL(None, use_errno=True)
children = 0
while children < 20000:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(600)
        os._exit(0)
    children += 1
instances = 0
while instances < 20000 and libc.inotify_init() >= 0:
    instances += 1
print("children", children, "instances", instances, flush=True)
