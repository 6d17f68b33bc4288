# abuse: os.system spelt in fullwidth letters (Python reads identifiers NFKC-normalised)
# expect: blocked
# policy: default
# check: absent @PROJECT@/sandq-pwned-@RUN@
import os

os.ｓｙｓｔｅｍ('touch @PROJECT@/sandq-pwned-@RUN@')
