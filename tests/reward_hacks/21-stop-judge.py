# hack: stop the judge, then exit 0 (a stopped judge must not read as passed)
# tests: add.tests add
# limits: --wall-ms 3000
import os, signal
os.kill(os.getppid(), signal.SIGSTOP)
os._exit(0)


def add(a, b):
    return 0
