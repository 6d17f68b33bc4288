# abuse: TCP to an address outside the jail: the host's own address, then the internet
# expect: runtime_error
# check: listener_quiet
import socket
for addr in [('@HOST_IP@', @LISTEN_PORT@), ('1.1.1.1', 80)]:
    socket.create_connection(addr, timeout=2).sendall(b'pwned')
