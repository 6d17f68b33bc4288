# abuse: os reached through another module's attribute (random imports os as _os)
# expect: blocked
# policy: default
# check: absent @PROJECT@/sandq-pwned-@RUN@
import random

random._os.system('touch @PROJECT@/sandq-pwned-@RUN@')
