# abuse: none: the expected output and white space after it
# expect: passed
# expected_stdout: 45
print(45)
print()
