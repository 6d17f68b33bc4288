# abuse: DNS: a query by UDP to a listener outside, then the resolver
# expect: runtime_error
# check: listener_quiet
import socket
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.sendto(b'\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01',
         ('@HOST_IP@', @LISTEN_PORT@))
print(socket.getaddrinfo('example.com', 80))
