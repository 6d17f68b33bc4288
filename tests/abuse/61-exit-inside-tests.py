# abuse: a wrong solution that ends the process with status 0 from inside the tests (the isolated
# judge: its process gone mid-call, reason "the candidate's process exited with status 0 during a
# call to add")
# expect: failed
# tests: add.tests add
import os


def add(a, b):
    os._exit(0)
