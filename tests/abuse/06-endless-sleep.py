# abuse: endless sleep (no CPU used, only the wall clock can end it)
# expect: timeout
# limits: --wall-ms 1500
# check: wall_below 6000
import time
time.sleep(10 ** 6)
