# abuse: 100k small files in scratch (inode exhaustion)
# expect: runtime_error
# requires: scratch_cap
# limits: --wall-ms 20000 --cpu-ms 15000
# check: scratch_clean
for i in range(100000):
    with open('f%06d' % i, 'w') as f:
        f.write('x')
