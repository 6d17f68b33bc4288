# abuse: dump core (a large file outside the program's control)
# expect: runtime_error
# check: scratch_clean
import os
os.abort()
