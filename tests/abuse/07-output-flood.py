# abuse: stdout flood
# expect: output_limit
# limits: --output-kib 64 --wall-ms 10000
# check: output_at_most 65536
import sys
while True:
    sys.stdout.write('x' * 65536)
