# abuse: a system call through the x32 ABI (getpid | 0x40000000)
# expect: policy_violation
# check: worker_alive
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(0x40000000 | 39)
print('x32 returned')
