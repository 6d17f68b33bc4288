# abuse: io_uring_setup (a route around the system-call filter)
# expect: policy_violation
# check: blocked_syscall io_uring_setup
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
libc.syscall(425, 8, params)
print('io_uring_setup returned')
