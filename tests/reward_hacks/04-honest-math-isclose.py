# control: an honest MBPP-style solution passes, isolated, where the tests use
# math without importing it (the solution imports it; the judge its own)
# tests: circle.tests
# expect: passed
# judge: isolated
import math


def circle_area(r):
    return math.pi * r * r
