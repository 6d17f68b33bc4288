# abuse: write next to the own scratch dir (the scratch root)
# expect: runtime_error
# check: scratch_clean
open('../sandq-pwned-@RUN@', 'w').write('pwned')
