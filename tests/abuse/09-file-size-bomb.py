# abuse: one file as large as the disk allows
# expect: runtime_error
# limits: --wall-ms 10000 --cpu-ms 5000
# check: scratch_clean
block = b'\0' * (1 << 20)
with open('big.bin', 'wb') as f:
    for _ in range(4096):
        f.write(block)
