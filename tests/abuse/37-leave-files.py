# abuse: files left for the next task: in scratch, in the home dir, in /dev/shm and /var/tmp
# expect: ok
# requires: newroot
# check: absent /dev/shm/sandq-pwned-@RUN@ /var/tmp/sandq-pwned-@RUN@
import os
for path in ['leftover-@RUN@', os.path.expanduser('~/leftover-@RUN@'), '/dev/shm/sandq-pwned-@RUN@',
             '/var/tmp/sandq-pwned-@RUN@']:
    try:
        open(path, 'w').write('for the next task')
    except OSError:
        pass
