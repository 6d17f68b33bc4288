# abuse: look for what an earlier task (37, 36, 35) left behind
# expect: ok
# check: stdout_is 'clean'
import os
found = [p for p in ['leftover-@RUN@', os.path.expanduser('~/leftover-@RUN@'), 'shadow', 'etc', 'up']
         if os.path.lexists(p)]
print('clean' if not found else 'found %s' % found)
