# attack: delete main.py
# expect: ok
import os
os.unlink('/scratch/main.py')
print('gone')
