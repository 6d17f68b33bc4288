# abuse: write into the project's source tree
# expect: runtime_error
# check: absent @PROJECT@/sandq-pwned-@RUN@
open('@PROJECT@/sandq-pwned-@RUN@', 'w').write('pwned')
