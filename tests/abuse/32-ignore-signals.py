# abuse: ignore SIGXCPU, SIGTERM and friends, then spin
# expect: cpu_limit
# limits: --cpu-ms 1000 --wall-ms 10000
# check: cpu_below 4000
import signal
for s in (signal.SIGXCPU, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):
    signal.signal(s, signal.SIG_IGN)
while True:
    pass
