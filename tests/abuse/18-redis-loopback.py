# abuse: write to the Redis on loopback
# expect: runtime_error
# check: redis_canary_intact
import socket
s = socket.create_connection(('127.0.0.1', @REDIS_PORT@), timeout=2)
s.sendall(b'SET sandq:abuse:canary pwned\r\nFLUSHALL\r\n')
print(s.recv(100))
