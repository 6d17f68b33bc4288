# attack: 30 forked spinners: RLIMIT_CPU counts each alone, the cgroup counts the tree
# expect: cpu_limit
# limits: --cpu-ms 1000 --wall-ms 20000
import os
for i in range(30):
    if os.fork() == 0:
        while True:
            pass
os.wait()
