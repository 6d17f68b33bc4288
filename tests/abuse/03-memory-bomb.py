# abuse: memory bomb: allocate and touch until refused
# expect: memory_limit
# limits: --memory-mib 200 --wall-ms 10000
# check: memory_below 262144
hog = []
while True:
    hog.append(bytearray(8 << 20))
