# control: an honest solution passes, judged isolated
# tests: add.tests add
# expect: passed
# judge: isolated
def add(a, b):
    return a + b
