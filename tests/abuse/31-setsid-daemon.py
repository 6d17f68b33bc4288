# abuse: a double-forked, setsid daemon meant to outlive the task
# expect: ok
# check: no_survivors
import os, time
if os.fork() == 0:
    try:
        os.setsid()
    except OSError:
        pass
    if os.fork() == 0:
        open('/proc/self/comm', 'w').write('@COMM@')
        time.sleep(3600)
    os._exit(0)
time.sleep(0.3)
print('parent done')
