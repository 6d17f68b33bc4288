# abuse: a wrong solution that ends the process with status 0 from inside the tests
# expect: failed
# tests: add.tests add
# check: reason_is 'exited before the tests completed'
import os


def add(a, b):
    os._exit(0)
