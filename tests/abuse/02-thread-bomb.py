# abuse: thread bomb: threads until none can start, then hold them
# expect: timeout
# limits: --wall-ms 3000 --memory-mib 256
# check: no_survivors
import threading, time
open('/proc/self/comm', 'w').write('@COMM@')
n = 0
for _ in range(100000):
    try:
        threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
        n += 1
    except (RuntimeError, MemoryError):
        break
print('threads', n, flush=True)
time.sleep(3600)
