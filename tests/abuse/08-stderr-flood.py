# abuse: stderr flood through the raw descriptor
# expect: output_limit
# limits: --output-kib 64 --wall-ms 10000
# check: output_at_most 65536
import os
while True:
    os.write(2, b'e' * 65536)
