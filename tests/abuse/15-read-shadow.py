# abuse: read /etc/shadow
# expect: runtime_error
# check: shadow_not_leaked
print(open('/etc/shadow').read())
