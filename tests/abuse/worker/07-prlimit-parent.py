# attack: prlimit64 on the parent (a warm task's zygote): RLIMIT_DATA for the next tasks, a low hard NOFILE
# expect: ok
import os, resource
for r, v in ((resource.RLIMIT_DATA, 10 << 20), (resource.RLIMIT_NOFILE, 8), (resource.RLIMIT_AS, 20 << 20)):
    try:
        resource.prlimit(os.getppid(), r, (v, v))
        print('changed', r)
    except PermissionError:
        print('refused', r)
