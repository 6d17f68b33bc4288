# abuse: SIGKILL a host process of the jail's own uid
# expect: runtime_error
# requires: pidns
# check: sentinel_alive
import os, signal
os.kill(@SENTINEL@, signal.SIGKILL)
