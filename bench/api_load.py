"""bench/api_load.py: the clients of bench/api.sh, against `sandq-producer api`.

  api_load.py events PORT N CLIENTS   N /run_code print(1) from CLIENTS keep-alive
                                      connections driven by one thread (selectors),
                                      as a load generator drives a server
  api_load.py threads PORT N CLIENTS  the same from CLIENTS python threads, one
                                      http.client connection each (verl's way:
                                      a thread pool of blocking requests)
  api_load.py compile PORT N LANG     N requests of one program in LANG (a
                                      compiled language), each with its own
                                      stdin, as verl sends a problem's test
                                      cases, 8 at a time

Every answer is checked (200, Success, the stdout wanted). events and threads
print "requests/s p50_ms p99_ms cpu_ms_per_request" (the clients' own CPU);
compile prints "requests compiled cached p50_compiled_ms p50_cached_ms".
"""
import http.client
import json
import random
import resource
import selectors
import socket
import sys
import threading
import time


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p / 100))]


def cpu_ms():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return (ru.ru_utime + ru.ru_stime) * 1000


BODY = json.dumps({"code": "print(1)", "language": "python"}).encode()


def ok(status, answer):
    return status == 200 and b'"status":"Success"' in answer and b'"stdout":"1\\n"' in answer


def events(port, n, clients):
    """One thread, CLIENTS non-blocking connections: each sends its next
    request as soon as its answer is read."""
    req = (b"POST /run_code HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n%s" % (len(BODY), BODY))
    sel = selectors.DefaultSelector()
    left, lat, bad = n, [], []
    conns = []
    for _ in range(clients):
        s = socket.create_connection(("127.0.0.1", port), timeout=120)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.setblocking(False)
        c = {"s": s, "buf": b"", "t": 0.0}
        sel.register(s, selectors.EVENT_READ, c)
        conns.append(c)
    c0, t0 = cpu_ms(), time.perf_counter()

    def send(c):
        nonlocal left
        if left == 0:
            sel.unregister(c["s"])
            c["s"].close()
            return False
        left -= 1
        c["t"] = time.perf_counter()
        c["s"].setblocking(True)
        c["s"].sendall(req)
        c["s"].setblocking(False)
        return True

    live = sum(send(c) for c in conns)
    while live:
        events_ = sel.select(timeout=120)
        if not events_:
            raise SystemExit("no answer within 120 s")
        for key, _ in events_:
            c = key.data
            d = c["s"].recv(1 << 16)
            if not d:
                raise SystemExit("the server closed a connection")
            c["buf"] += d
            while True:
                buf = c["buf"]
                h = buf.find(b"\r\n\r\n")
                if h < 0:
                    break
                head = buf[:h].decode("latin-1").split("\r\n")
                length = next((int(x.split(":", 1)[1]) for x in head[1:] if x.lower().startswith("content-length:")), None)
                if length is None:
                    raise SystemExit("an answer without Content-Length: " + head[0])
                if len(buf) < h + 4 + length:
                    break
                answer, c["buf"] = buf[h + 4:h + 4 + length], buf[h + 4 + length:]
                lat.append((time.perf_counter() - c["t"]) * 1000)
                status = int(head[0].split()[1])
                if not ok(status, answer):
                    bad.append((status, answer[:200]))
                if not send(c):
                    live -= 1
                    break
    secs = time.perf_counter() - t0
    return secs, lat, bad, cpu_ms() - c0


def threads(port, n, clients):
    lock = threading.Lock()
    left = [n]
    lat, bad = [], []
    start = threading.Barrier(clients + 1)

    def client():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        c.connect()
        start.wait()
        mine = []
        while True:
            with lock:
                if left[0] == 0:
                    break
                left[0] -= 1
            t = time.perf_counter()
            c.request("POST", "/run_code", BODY, {"Content-Type": "application/json"})
            r = c.getresponse()
            a = r.read()
            mine.append((time.perf_counter() - t) * 1000)
            if not ok(r.status, a):
                bad.append((r.status, a[:200]))
        with lock:
            lat.extend(mine)

    ts = [threading.Thread(target=client) for _ in range(clients)]
    for t in ts:
        t.start()
    start.wait()
    c0, t0 = cpu_ms(), time.perf_counter()
    for t in ts:
        t.join()
    return time.perf_counter() - t0, lat, bad, cpu_ms() - c0


# One program per compiled language: it prints its stdin's number doubled.
# A fresh constant each run keeps the workers' compile cache cold for its first request.
PROGRAMS = {
    "cpp": "#include <iostream>\nint main() { long x; std::cin >> x; std::cout << 2 * x << \"\\n\"; return %d - %d; }\n",
    "go": "package main\nimport \"fmt\"\nfunc main() { var x int; fmt.Scan(&x); fmt.Println(2 * x + %d - %d) }\n",
    "rust": "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap();"
            " let x: i64 = s.trim().parse().unwrap(); println!(\"{}\", 2 * x + %d - %d); }\n",
}


def compile_run(port, n, language):
    salt = random.randrange(1 << 30)
    code = PROGRAMS[language] % (salt, salt)
    lock = threading.Lock()
    todo = list(range(1, n + 1))
    got, bad = [], []

    def client():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        while True:
            with lock:
                if not todo:
                    return
                x = todo.pop(0)
            body = json.dumps({"code": code, "language": language, "stdin": "%d\n" % x})
            t = time.perf_counter()
            c.request("POST", "/run_code", body, {"Content-Type": "application/json"})
            r = c.getresponse()
            a = json.loads(r.read())
            ms = (time.perf_counter() - t) * 1000
            with lock:
                if r.status != 200 or a.get("status") != "Success" or a["run_result"]["stdout"].strip() != str(2 * x):
                    bad.append((r.status, str(a)[:300]))
                else:
                    got.append((a["sandq"].get("compile_cached"), ms))

    ts = [threading.Thread(target=client) for _ in range(min(8, n))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad and len(got) == n, (len(bad), bad[:2])
    cached = [ms for hit, ms in got if hit]
    compiled = [ms for hit, ms in got if not hit]
    print("%d %d %d %.1f %.1f" % (n, len(compiled), len(cached), pct(compiled, 50) if compiled else 0,
                                  pct(cached, 50) if cached else 0))


def main():
    mode, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if mode == "compile":
        return compile_run(port, n, sys.argv[4])
    secs, lat, bad, cpu = (events if mode == "events" else threads)(port, n, int(sys.argv[4]))
    assert not bad and len(lat) == n, (len(bad), bad[:3], len(lat))
    print("%.1f %.1f %.1f %.3f" % (n / secs, pct(lat, 50), pct(lat, 99), cpu / n))


main()
