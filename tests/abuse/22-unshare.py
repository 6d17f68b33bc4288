# abuse: unshare(CLONE_NEWUSER) to become root in a new namespace
# expect: policy_violation
# check: blocked_syscall unshare
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.unshare(0x10000000)
print('unshare returned')
