# abuse: the expected output followed by a NUL byte (it is output, not white space)
# expect: failed
# expected_stdout: 45
import sys

sys.stdout.write('45\n\0')
