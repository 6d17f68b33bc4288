# abuse: an exit hook that turns the failed tests' status 1 into 0 (spawn runs exit hooks; warm runs none)
# expect: failed
# tests: add.tests add
import atexit
import os

atexit.register(os._exit, 0)


def add(a, b):
    return a - b
