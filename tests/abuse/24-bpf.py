# abuse: bpf(BPF_PROG_LOAD) by raw system call number
# expect: policy_violation
# check: blocked_syscall bpf
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(321, 5, None, 0)
print('bpf returned')
