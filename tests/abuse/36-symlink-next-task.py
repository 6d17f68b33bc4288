# abuse: symlinks at the other tasks' scratch dirs (and a write through them)
# expect: ok runtime_error
# check: scratch_clean
import os
try:
    for name in os.listdir('..'):
        os.symlink('../' + name, 'peer-' + name)
        open('../%s/sandq-pwned-@RUN@' % name, 'w').write('pwned')
except OSError as e:
    print('denied:', e.strerror)
