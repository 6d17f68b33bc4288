# abuse: change the host through /proc/sys (the hostname)
# expect: runtime_error
# check: hostname_intact
open('/proc/sys/kernel/hostname', 'w').write('pwned')
