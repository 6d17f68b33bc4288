# abuse: kill(-1): every process this uid may signal
# expect: ok runtime_error
# requires: pidns
# check: sentinel_alive
import os, signal
os.kill(-1, signal.SIGKILL)
print('still here')
