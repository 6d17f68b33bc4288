# abuse: get root back: setuid(0), then the setuid bits of su
# expect: runtime_error
# check: worker_alive
import os
os.setuid(0)
