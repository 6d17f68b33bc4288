# abuse: symlinks planted in scratch for the cleanup to follow: /etc/shadow, /etc, the scratch root
# expect: ok
# check: host_files_intact
import os
os.symlink('/etc/shadow', 'shadow')
os.symlink('/etc', 'etc')
os.symlink('..', 'up')
os.mkdir('d')
os.symlink('/etc/hostname', 'd/hostname')
print('planted')
