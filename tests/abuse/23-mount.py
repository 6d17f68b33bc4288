# abuse: mount a tmpfs over the scratch dir
# expect: policy_violation
# check: blocked_syscall mount
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.mount(b'none', b'.', b'tmpfs', 0, None)
print('mount returned')
