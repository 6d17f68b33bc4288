# abuse: hunt for the worker's secrets: own env, the parent's, every process's
# expect: ok
# check: canary_not_leaked
import os
print(dict(os.environ))
for pid in [str(os.getppid())] + os.listdir('/proc'):
    try:
        print(pid, open('/proc/%s/environ' % pid, 'rb').read())
    except (OSError, ValueError):
        pass
