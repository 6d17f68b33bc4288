# abuse: none: an honest solution with the same tests (after the attacks, its verdict must stand)
# expect: passed
# tests: add.tests add
# check: reason_is ''
def add(a, b):
    return a + b
