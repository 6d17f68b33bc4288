# abuse: __import__ fetched by getattr with a computed name, through sys.modules
# expect: blocked
# policy: default
# check: absent @PROJECT@/sandq-pwned-@RUN@
import sys

getattr(sys.modules['builtins'], '_' + '_import__')('os').system('touch @PROJECT@/sandq-pwned-@RUN@')
