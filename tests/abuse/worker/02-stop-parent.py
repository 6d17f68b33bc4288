# attack: SIGSTOP the parent (a warm task's zygote), then end normally
# expect: ok
import os, signal
os.kill(os.getppid(), signal.SIGSTOP)
print('stopped it')
