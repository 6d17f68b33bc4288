# abuse: a double-forked, setsid daemon meant to outlive the task
# expect: ok
# check: no_survivors
import ctypes
import os, time
if os.fork() == 0:
    try:
        os.setsid()
    except OSError:
        pass
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, b'@COMM@', 0, 0, 0)  # PR_SET_NAME: survivors are found by this name
        time.sleep(3600)
    os._exit(0)
time.sleep(0.3)
print('parent done')
