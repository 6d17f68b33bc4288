# abuse: fork bomb; every child spins too
# expect: timeout cpu_limit
# limits: --wall-ms 3000 --cpu-ms 2000
# check: no_survivors
import os
open('/proc/self/comm', 'w').write('@COMM@')
while True:
    try:
        os.fork()
    except OSError:
        pass
