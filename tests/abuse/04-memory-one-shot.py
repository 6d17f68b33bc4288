# abuse: one huge allocation
# expect: memory_limit
# limits: --memory-mib 200
# check: memory_below 262144
x = bytearray(64 << 30)
