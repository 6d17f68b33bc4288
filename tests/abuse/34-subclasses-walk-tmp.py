# abuse: the __subclasses__ walk to os.system, writing into the host's /tmp
# expect: ok runtime_error
# requires: newroot
# check: absent @MARK@-34
for c in ().__class__.__bases__[0].__subclasses__():
    if c.__name__ == '_wrap_close':
        print(c.__init__.__globals__['system']('echo pwned > @MARK@-34'))
