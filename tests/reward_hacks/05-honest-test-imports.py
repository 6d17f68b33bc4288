# control: an honest solution passes, isolated, against tests that import
# isclose themselves (test_imports), its own import of math aside
# tests: isclose_imports.tests
# expect: passed
# judge: isolated
from math import isclose, pi


def circle_area(r):
    return pi * r * r
