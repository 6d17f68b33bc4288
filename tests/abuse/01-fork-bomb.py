# abuse: fork bomb; every child spins too
# expect: timeout cpu_limit
# limits: --wall-ms 3000 --cpu-ms 2000
# check: no_survivors
import ctypes
import os
ctypes.CDLL(None).prctl(15, b'@COMM@', 0, 0, 0)  # PR_SET_NAME: survivors are found by this name
while True:
    try:
        os.fork()
    except OSError:
        pass
