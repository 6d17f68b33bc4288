# abuse: hunt for the worker's secrets: own env, the parent's, every process's
# expect: ok
# check: canary_not_leaked
import os
print(dict(os.environ))
try:
    pids = os.listdir('/proc')
except OSError:
    pids = []  # no /proc in this jail: nothing to hunt through
for pid in [str(os.getppid())] + pids:
    try:
        print(pid, open('/proc/%s/environ' % pid, 'rb').read())
    except (OSError, ValueError):
        pass
