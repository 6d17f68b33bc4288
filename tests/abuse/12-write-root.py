# abuse: write into /root
# expect: runtime_error
# check: absent /root/sandq-pwned-@RUN@
open('/root/sandq-pwned-@RUN@', 'w').write('pwned')
