"""resp.py: Redis commands in the wire format (RESP), for tests that load
many keys at once through `redis-cli --pipe` (import with SQ_SRC/tests/lib
on sys.path)."""


def cmd(*args):
    """One command: each argument bytes, or anything str() turns into text."""
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out
