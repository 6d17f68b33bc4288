# attack: 1,100 nested directories, the innermost mode 0, the outermost search-only, for the cleanup
# expect: ok
import os
for i in range(1100):
    os.mkdir('d')
    os.chdir('d')
os.chmod('.', 0)
os.chdir('/scratch')
os.chmod('d', 0o100)
print('nested')
