# control: tests that construct the candidate's class run isolated: the objects stay in its process
# tests: pairs.tests
# expect: passed
# judge: isolated
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


def longest_chain(pairs, n):
    pairs = sorted(pairs, key=lambda p: p.b)
    count, end = 0, float("-inf")
    for p in pairs[:n]:
        if p.a > end:
            count, end = count + 1, p.b
    return count
