def check(g):
    assert g(2) == 4
