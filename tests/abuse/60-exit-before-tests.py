# abuse: a wrong solution that leaves with status 0 before its tests run
# expect: failed
# tests: add.tests add
# check: reason_is 'exited before the tests completed'
def add(a, b):
    return 0


raise SystemExit(0)
