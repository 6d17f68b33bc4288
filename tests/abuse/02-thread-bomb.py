# abuse: thread bomb: threads until none can start, then hold them
# expect: timeout
# limits: --wall-ms 3000 --memory-mib 256
# check: no_survivors
import ctypes
import threading, time
ctypes.CDLL(None).prctl(15, b'@COMM@', 0, 0, 0)  # PR_SET_NAME: survivors are found by this name
n = 0
for _ in range(100000):
    try:
        threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
        n += 1
    except (RuntimeError, MemoryError):
        break
print('threads', n, flush=True)
time.sleep(3600)
