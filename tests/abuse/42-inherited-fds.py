# abuse: use descriptors inherited from the worker (its Redis connection, its logs)
# expect: ok
# check: stdout_is '[0, 1, 2]'
import os
fds = []
for fd in range(1024):
    try:
        os.fstat(fd)
        fds.append(fd)
    except OSError:
        pass
print(fds)
