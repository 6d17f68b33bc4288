# hack: block forever inside a call
# tests: add.tests add
# limits: --wall-ms 3000
import time


def add(a, b):
    while True:
        time.sleep(1)
