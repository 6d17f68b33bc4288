# attack: make /scratch unwritable for whoever comes next
# expect: ok
import os
os.chmod('/scratch', 0o500)
print('read-only now')
