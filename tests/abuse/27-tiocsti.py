# abuse: TIOCSTI: push keystrokes into a terminal (stdin and /dev/tty)
# expect: policy_violation
# check: blocked_syscall ioctl
import fcntl, os
for path in ['/dev/tty', '/dev/stdin']:
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        continue
    fcntl.ioctl(fd, 0x5412, b'x')
fcntl.ioctl(0, 0x5412, b'x')
print('TIOCSTI returned')
