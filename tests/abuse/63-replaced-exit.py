# abuse: os._exit and sys.excepthook replaced so that any end, a failed test's too, is status 0
# expect: failed
# tests: add.tests add
import os
import sys

_real_exit = os._exit
os._exit = lambda code: _real_exit(0)
sys.excepthook = lambda *exc: _real_exit(0)


def add(a, b):
    return a - b
