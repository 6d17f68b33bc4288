# abuse: SIGKILL the parent (the worker)
# expect: runtime_error
# check: worker_alive
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
