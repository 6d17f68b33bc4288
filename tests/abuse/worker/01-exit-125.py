# attack: exit status 125, once read as "the jail could not set the task up" (the worker then stopped)
# expect: runtime_error
import os
os._exit(125)
