# control: an honest MBPP-style solution passes, judged isolated (its print kept)
# tests: sort_words.tests
# expect: passed
# judge: isolated
def sort_words(words):
    print("sorting", len(words))
    return sorted(words)
