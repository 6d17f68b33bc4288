# attack: clone(CLONE_PARENT): children handed to the parent, zombies piling up there
# expect: policy_violation
import ctypes
libc = ctypes.CDLL(None)
for i in range(80):
    if libc.syscall(56, 0x8000 | 17, 0, 0, 0, 0) == 0:
        libc.syscall(60, 0)  # the child: exit at once, a zombie for the zygote
