# control: every kind of plain value crosses both ways intact (codec edges), isolated
# tests: values.tests
# expect: passed
# judge: isolated
from collections import Counter, OrderedDict, defaultdict, deque


def values(n):
    deep = []
    for _ in range(90):
        deep = [deep]
    return (2 ** n + 1, float("nan"), float("inf"), -0.0, complex(1.5, -2), b"\x00\xff", deep,
            ({1, 2}, frozenset({"a"})), {(1, 2): [None, True], "k": {"n": -1}}, "h\u00e9llo \U0001F600 \udc80",
            Counter("aa"), (int, str, type(None)), [OrderedDict(x=1), defaultdict(list), deque([1, 2], 3)])


def sorted_in_place(xs):
    xs.sort()


def echo(x):
    return x


def raises():
    raise KeyError("missing", 3)
