# abuse: ptrace(PTRACE_ATTACH) the parent through a raw system call
# expect: policy_violation
# check: blocked_syscall ptrace
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall(101, 16, os.getppid(), 0, 0)
print('ptrace returned')
