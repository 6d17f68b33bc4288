# abuse: SIGKILL the parent (the worker)
# expect: runtime_error ok
# (in a PID namespace the parent is the jail's init, which ignores signals from inside: ok)
# check: worker_alive
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
