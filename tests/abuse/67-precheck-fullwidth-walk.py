# abuse: the __subclasses__ walk with its dunders spelt in fullwidth letters
# expect: blocked
# policy: default
# check: absent @PROJECT@/sandq-pwned-@RUN@
for c in ().__class__.__ｂａｓｅｓ__[0].__ｓｕｂｃｌａｓｓｅｓ__():
    if c.__name__ == '_wrap_close':
        c.__init__.__ｇｌｏｂａｌｓ__['system']('touch @PROJECT@/sandq-pwned-@RUN@')
