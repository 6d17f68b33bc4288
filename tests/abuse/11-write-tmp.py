# abuse: write into the host's /tmp
# expect: runtime_error
# requires: newroot
# check: absent @MARK@-11
open('@MARK@-11', 'w').write('pwned')
