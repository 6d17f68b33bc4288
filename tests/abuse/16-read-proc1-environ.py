# abuse: read the environment of pid 1
# expect: runtime_error
# check: proc1_env_not_leaked
print(open('/proc/1/environ', 'rb').read())
