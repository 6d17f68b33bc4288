# hack: read the judge's memory (process_vm_readv) and its files through /proc
# tests: add.tests add
import ctypes, os
for path in ("/proc/%d/mem" % os.getppid(), "/proc/%d/fd/0" % os.getppid()):
    try:
        print(open(path, "rb").read(64))
    except OSError as e:
        print("no", path, e.__class__.__name__)
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(64)
local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)
libc.syscall(310, os.getppid(), local, 1, local, 1, 0)


def add(a, b):
    return 0
