# attack: SIGSTOP the parent (refused for a warm task's zygote), then hang until the wall clock ends the task
# expect: timeout
# limits: --wall-ms 1500
import os, signal, time
try:
    os.kill(os.getppid(), signal.SIGSTOP)
except PermissionError:
    pass
time.sleep(60)
