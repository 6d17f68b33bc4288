# attack: SIGSTOP the parent (a warm task's zygote: refused, its real and saved uid are not the task's), then end normally
# expect: ok
import os, signal
try:
    os.kill(os.getppid(), signal.SIGSTOP)
    print('stopped it')
except PermissionError:
    print('refused')
