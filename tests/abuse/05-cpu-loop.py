# abuse: CPU loop
# expect: cpu_limit
# limits: --cpu-ms 1000 --wall-ms 10000
# check: cpu_below 4000
while True:
    pass
