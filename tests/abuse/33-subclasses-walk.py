# abuse: the __subclasses__ walk (no import statement) to os.system and Popen
# expect: ok runtime_error
# check: absent @PROJECT@/sandq-pwned-@RUN@
classes = ().__class__.__bases__[0].__subclasses__()
cmd = 'touch @PROJECT@/sandq-pwned-@RUN@'
for c in classes:
    if c.__name__ == '_wrap_close':
        c.__init__.__globals__['system'](cmd)
    if c.__name__ == 'Popen':
        c(['/bin/sh', '-c', cmd]).wait()
print('walk done')
