# abuse: a result that compares equal to everything
# expect: failed
# tests: add.tests add
# check: reason_is 'returned a value the judge cannot compare: Anything'
class Anything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


def add(a, b):
    return Anything()
