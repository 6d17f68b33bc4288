# coding: utf-7
# abuse: a utf-7 coding cookie: the checker's bytes are not the code Python runs
# expect: blocked
# policy: default
# check: absent @PROJECT@/sandq-pwned-@RUN@
cmd = 'touch @PROJECT@/sandq-pwned-@RUN@'
+AGkAbQBwAG8AcgB0ACAAbwBzADsAIABvAHMALgBzAHkAcwB0AGUAbQAoAGMAbQBkACk-
