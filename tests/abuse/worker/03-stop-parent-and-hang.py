# attack: SIGSTOP the parent, then hang until the wall clock ends the task
# expect: timeout
# limits: --wall-ms 1500
import os, signal, time
os.kill(os.getppid(), signal.SIGSTOP)
time.sleep(60)
