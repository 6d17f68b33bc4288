#!/usr/bin/python3
# sandq-fake-llm: the project's stand-in for a paid, remote, OpenAI-compatible
# LLM. A real HTTP/1.1 server (stdlib asyncio: a minimal keep-alive HTTP/1.1
# protocol on its transports, answers timed by call_later, so thousands of
# connections and thousands of requests a second) that answers POST /v1/chat/completions from a JSONL rule file
# and misbehaves on purpose, seeded, so the client's error paths are tested
# over real sockets.
#
# Rule file: one JSON object per line (blank lines and '#' lines ignored):
#   {"match": "<substring of the last user message>", "content": "<reply>"}
# optional keys:
#   "kind": "code" | "risk" | "repair"   which requests the rule answers. A
#           request is "risk" when its system message asks for a security
#           review, "repair" when the user message starts "Your previous
#           program failed", else "code". Without "kind" a rule answers code
#           and repair requests (never risk ones).
#   "status": HTTP status (default 200; a non-2xx body is an OpenAI-style
#             error whose message is "error_message" if given)
#   "delay_ms": wait before answering (every matching request)
#   "fault": "malformed_json" | "no_usage" | "truncated" | "reset" | "hang" |
#            "retry_after" (status 429, header "retry_after_s" seconds, default 1) |
#            "retry_after_date" (status 429, the header as an HTTP date) |
#            "slow_drip" (the body one byte every "drip_ms", default 50) |
#            "error_200" (status 200 with an OpenAI-style error body, message
#            "error_message") | "giant_header" (a 200 KB response header)
#            "not_http" (a reply that is not HTTP: a transport error no retry fixes)
#   "times": N  the status/fault applies to the first N matching requests only
#   "content_repeat": N  the content is repeated N times (large replies)
#   "contents": [...]  instead of "content": the rule's k-th matching request
#           gets contents[(k-1) % len] (sampled replies: some right, some wrong)
#   "default": true  the fallback rule for code/repair requests
#   "system_match": "<substring>"  the rule answers only requests whose system
#           message holds it (what the worker asked for, e.g. a language)
# In "content", {{n}} becomes the request's number (unique code per reply).
# Without a rule, code requests get a tiny ```python block printing "hello",
# and risk requests a verdict from a keyword heuristic (level none unless the
# code touches os.system, subprocess, socket, shutil.rmtree, eval or exec).
#
# Global misbehaviour (seeded by --seed): --latency-ms/--latency-jitter-ms
# (uniform) or --latency-dist exp, --error-rate P (500 or 503 at random),
# --rate-limit-rate P (429 with Retry-After 1).
#
# GET /stats returns counters: total requests, hits per rule, requests per
# kind, requests per model and per temperature, how many requests carried an
# Authorization header, and the most requests waiting for their answer at
# once (peak_waiting_requests: the client's concurrency, with no clock).

import argparse
import asyncio
from collections import deque
import email.utils
import json
import math
import os
import random
import signal
import socket
import struct
import sys
import time

VERSION = "0.1.0"  # sandq's version (CMakeLists.txt project())

FAULTS = {"malformed_json", "no_usage", "truncated", "reset", "hang", "retry_after",
          "retry_after_date", "slow_drip", "error_200", "giant_header", "not_http"}
KINDS = {"code", "risk", "repair"}
MAX_BODY_BYTES = 16 * 1024 * 1024
HANG_MAX_S = 600.0
BUILTIN_CONTENT = "```python\nprint(\"hello\")\n```\n"
RISK_MARKER = "security reviewer"
REPAIR_MARKER = "Your previous program failed"
RISKY = {"os.system": "high", "subprocess": "high", "socket": "medium", "shutil.rmtree": "critical",
         "eval(": "medium", "exec(": "medium"}
REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests",
           500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


def load_rules(path):
    """Returns (rules, default_rule) from a JSONL file; exits on a bad line."""
    rules, default = [], None
    if not path:
        return rules, default
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            try:
                rule = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"sandq-fake-llm: {path}:{lineno}: not JSON: {e}")
            if not isinstance(rule, dict):
                sys.exit(f"sandq-fake-llm: {path}:{lineno}: not an object")
            fault = rule.get("fault")
            if fault is not None and fault not in FAULTS:
                sys.exit(f"sandq-fake-llm: {path}:{lineno}: unknown fault {fault!r} "
                         f"(valid: {', '.join(sorted(FAULTS))})")
            if rule.get("kind") is not None and rule["kind"] not in KINDS:
                sys.exit(f"sandq-fake-llm: {path}:{lineno}: unknown kind {rule['kind']!r}")
            if not isinstance(rule.get("content", ""), str):
                sys.exit(f"sandq-fake-llm: {path}:{lineno}: content must be a string")
            if not isinstance(rule.get("system_match", ""), str):
                sys.exit(f"sandq-fake-llm: {path}:{lineno}: system_match must be a string")
            cs = rule.get("contents")
            if cs is not None and (not isinstance(cs, list) or not cs or not all(isinstance(c, str) for c in cs)):
                sys.exit(f"sandq-fake-llm: {path}:{lineno}: contents must be a non-empty list of strings")
            if rule.get("default"):
                default = rule
            elif isinstance(rule.get("match"), str):
                rules.append(rule)
            else:
                sys.exit(f"sandq-fake-llm: {path}:{lineno}: needs \"match\" or \"default\": true")
    return rules, default


def rule_key(rule):
    if rule is None:
        return "<builtin>"
    if rule.get("default"):
        return "<default>"
    return rule["match"]


def tokens(n_chars):
    return max(1, math.ceil(n_chars / 4))


def message_text(msg):
    content = msg.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def risk_verdict(code):
    level, why = "none", "no risky operation found"
    order = ["none", "low", "medium", "high", "critical"]
    for word, lv in RISKY.items():
        if word in code and order.index(lv) > order.index(level):
            level, why = lv, f"uses {word.rstrip('(')}"
    action = {"critical": "block", "high": "block", "medium": "warn"}.get(level, "allow")
    return json.dumps({"level": level, "reason": why, "action": action, "confidence": 0.9})


class State:
    def __init__(self, args, rules, default):
        self.args, self.rules, self.default = args, rules, default
        self.rng = random.Random(args.seed)
        self.total = 0
        self.hits = {}
        self.kinds = {}
        self.auth = 0
        self.models = {}
        self.temperatures = {}
        self.open_conns = 0
        self.conns = set()
        self.waiting = 0       # requests read and not yet answered
        self.peak_waiting = 0  # the most at once: how concurrent the client was

    def pick(self, kind, user_text, system_text, has_auth):
        """Returns (rule, abnormal, n): abnormal is False once 'times' is used up;
        n counts the rule's matching requests (1 for the first)."""
        def fits(r):
            if r.get("system_match", "") not in system_text:
                return False
            k = r.get("kind")
            return k == kind if k else kind != "risk"
        rule = next((r for r in self.rules if fits(r) and r["match"] in user_text), None)
        if rule is None and kind != "risk":
            rule = self.default
        self.total += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if has_auth:
            self.auth += 1
        key = rule_key(rule) if rule is not None or kind != "risk" else "<risk-builtin>"
        n = self.hits.get(key, 0) + 1
        self.hits[key] = n
        abnormal = True
        if rule is not None and "times" in rule:
            abnormal = n <= int(rule["times"])
        return rule, abnormal, n

    def latency_s(self):
        a = self.args
        if a.latency_dist == "exp" and a.latency_ms > 0:
            return self.rng.expovariate(1000.0 / a.latency_ms)
        jitter = self.rng.uniform(-a.latency_jitter_ms, a.latency_jitter_ms) if a.latency_jitter_ms else 0
        return max(0.0, (a.latency_ms + jitter) / 1000.0)

    def stats(self):
        return {"requests": self.total, "hits": dict(self.hits), "kinds": dict(self.kinds),
                "models": dict(self.models), "temperatures": dict(self.temperatures),
                "authorization_headers": self.auth, "open_connections": self.open_conns,
                "peak_waiting_requests": self.peak_waiting}


def http_response(status, body, ctype="application/json", extra=(), length=None):
    head = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}",
            "Server: sandq-fake-llm/2", f"Content-Type: {ctype}",
            f"Content-Length: {len(body) if length is None else length}"]
    head += [f"{k}: {v}" for k, v in extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def error_body(status, message):
    etype = "rate_limit_error" if status == 429 else ("server_error" if status >= 500 else "invalid_request_error")
    return json.dumps({"error": {"message": message, "type": etype, "code": None}}).encode()


class Conn(asyncio.Protocol):
    """One client connection: a minimal HTTP/1.1 server (keep-alive, requests
    answered in order) written against asyncio's transport, with no
    coroutine per request: a request is parsed as its bytes arrive and its
    answer is written by a timer (call_later) after its latency, so one
    process keeps thousands of requests in flight at little CPU each."""

    def __init__(self, state):
        self.state = state
        self.loop = asyncio.get_running_loop()
        self.transport = None
        self.buf = bytearray()
        self.slots = deque()  # per request, in order: [ready, data, then] (then: "keep", "close", "drip", "hang")
        self.dead = False     # closed, or no further request is read (hang, a fault that closes)
        self.need = None      # (body_start, body_len, method, path, headers) while a body is still arriving
        self.dripping = False # a slow_drip answer is being written: the rest wait

    def connection_made(self, transport):
        self.transport = transport
        self.state.open_conns += 1
        self.state.conns.add(self)

    def connection_lost(self, exc):
        self.state.open_conns -= 1
        self.state.conns.discard(self)
        self.dead = True
        self.slots.clear()

    def close(self):
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
        self.dead = True

    def data_received(self, data):
        if self.dead:
            return
        self.buf += data
        while not self.dead:
            if self.need is None:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    if len(self.buf) > 65536:  # a request head this large is not one
                        self.close()
                    return
                head = bytes(self.buf[:end]).decode("latin-1").split("\r\n")
                parts = head[0].split()
                if len(parts) != 3:
                    self.close()
                    return
                headers = {}
                for h in head[1:]:
                    k, _, v = h.partition(":")
                    headers[k.strip().lower()] = v.strip()
                try:
                    n = int(headers.get("content-length", "0") or 0)
                except ValueError:
                    self.close()
                    return
                if n < 0 or n > MAX_BODY_BYTES:
                    self.respond(self.slot(), http_response(400, error_body(400, "request body too large")), "close")
                    self.dead = True
                    return
                self.need = (end + 4, n, parts[0], parts[1], headers)
            start, n, method, path, headers = self.need
            if len(self.buf) < start + n:
                return
            raw = bytes(self.buf[start:start + n])
            del self.buf[:start + n]
            self.need = None
            keep = headers.get("connection", "").lower() != "close"
            self.request(method, path, headers, raw, keep)

    # -- answers, in request order --

    def slot(self):
        s = [False, b"", "keep", None]
        self.slots.append(s)
        return s

    def respond(self, s, data, then="keep", arg=None):
        s[0], s[1], s[2], s[3] = True, data, then, arg
        self.flush()

    def flush(self):
        while self.slots and self.slots[0][0] and not self.dead and not self.dripping:
            _, data, then, arg = self.slots.popleft()
            t = self.transport
            if then == "reset":
                sock = t.get_extra_info("socket")
                if sock is not None:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                t.abort()
                self.dead = True
                return
            if then == "hang":  # hold the connection, answer nothing, until the client leaves
                self.dead = True
                self.loop.call_later(HANG_MAX_S, self.close)
                return
            if then == "drip":
                self.drip(data, arg)
                return
            if data:
                t.write(data)
            if then == "close":
                self.close()
                return

    def drip(self, data, drip_s):
        """The head at once, then the body one byte every drip_s; the answers
        behind it wait, and the connection stays usable afterwards."""
        head_end = data.index(b"\r\n\r\n") + 4
        self.transport.write(data[:head_end])
        self.dripping = True

        def step(i):
            if self.dead or self.transport.is_closing():
                return
            if i < len(data):
                self.transport.write(data[i:i + 1])
                self.loop.call_later(drip_s, step, i + 1)
            else:
                self.dripping = False
                self.flush()

        self.loop.call_later(drip_s, step, head_end)

    # -- one request --

    def request(self, method, path, headers, raw, keep):
        s = self.slot()
        if method == "GET":
            if path == "/stats":
                data = http_response(200, json.dumps(self.state.stats()).encode())
            elif path == "/health":
                data = http_response(200, b'{"ok": true}')
            else:
                data = http_response(404, error_body(404, f"no such path: {path}"))
            return self.respond(s, data, "keep" if keep else "close")
        if method != "POST" or path != "/v1/chat/completions":
            return self.respond(s, http_response(404, error_body(404, f"no such path: {path}")),
                                "keep" if keep else "close")
        self.complete(s, raw, "authorization" in headers, keep)

    def complete(self, s, raw, has_auth, keep):
        after = "keep" if keep else "close"
        try:
            req = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            return self.respond(s, http_response(400, error_body(400, f"request body is not JSON: {e}")), after)
        if not isinstance(req, dict) or not isinstance(req.get("model"), str) or not req["model"]:
            return self.respond(s, http_response(400, error_body(400, "'model' must be a non-empty string")), after)
        messages = req.get("messages")
        if not isinstance(messages, list) or not messages or \
                not all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in messages):
            return self.respond(s, http_response(400, error_body(400, "'messages' must be a list of messages")), after)
        user_text = system_text = ""
        for m in messages:
            if m["role"] == "user":
                user_text = message_text(m)
            elif m["role"] == "system":
                system_text = message_text(m)
        kind = "risk" if RISK_MARKER in system_text else (
            "repair" if user_text.startswith(REPAIR_MARKER) else "code")
        prompt_chars = sum(len(message_text(m)) for m in messages)
        st = self.state
        st.models[req["model"]] = st.models.get(req["model"], 0) + 1
        temp = req.get("temperature")
        tkey = "absent" if temp is None else repr(float(temp)) if isinstance(temp, (int, float)) else "invalid"
        st.temperatures[tkey] = st.temperatures.get(tkey, 0) + 1
        rule, abnormal, hit = st.pick(kind, user_text, system_text, has_auth)
        number = st.total
        if rule is None:
            rule = {"content": risk_verdict(user_text) if kind == "risk" else BUILTIN_CONTENT}
        delay = st.latency_s() + rule.get("delay_ms", 0) / 1000.0
        args = (s, rule, abnormal, req["model"], prompt_chars, number, after, hit)
        st.waiting += 1
        st.peak_waiting = max(st.peak_waiting, st.waiting)
        if delay > 0:
            self.loop.call_later(delay, self.answer, *args)
        else:
            self.answer(*args)

    def answer(self, s, rule, abnormal, model, prompt_chars, number, after, hit=1):
        self.state.waiting -= 1
        if self.dead:
            return
        st, a = self.state, self.state.args
        if rule.get("contents"):
            content = rule["contents"][(hit - 1) % len(rule["contents"])]
        else:
            content = rule.get("content", "")
        content = content * int(rule.get("content_repeat", 1))
        content = content.replace("{{n}}", str(number))
        fault = rule.get("fault") if abnormal else None
        status = 200
        if abnormal:
            status = int(rule.get("status", 429 if fault in ("retry_after", "retry_after_date") else 200))
        if status == 200 and fault is None and (a.error_rate or a.rate_limit_rate):
            r = st.rng.random()
            if r < a.error_rate:
                status = st.rng.choice((500, 503))
            elif r < a.error_rate + a.rate_limit_rate:
                status, fault = 429, "retry_after"
        if fault == "reset":
            return self.respond(s, b"", "reset")
        if fault == "not_http":
            return self.respond(s, b"SANDQ-FAKE 42 this is not http\r\n\r\n", "close")
        if fault == "hang":
            return self.respond(s, b"", "hang")
        if status != 200:
            extra = []
            if fault == "retry_after":
                extra.append(("Retry-After", str(rule.get("retry_after_s", 1))))
            elif fault == "retry_after_date":
                when = time.time() + float(rule.get("retry_after_s", 2))
                extra.append(("Retry-After", email.utils.formatdate(when, usegmt=True)))
            msg = rule.get("error_message", f"fake-llm: simulated HTTP {status}")
            return self.respond(s, http_response(status, error_body(status, msg), extra=extra), after)
        if fault == "error_200":
            return self.respond(s, http_response(200, error_body(429, rule.get("error_message", "fake-llm: an error"))),
                                after)
        completion = {
            "id": "chatcmpl-fake-%016x" % st.rng.getrandbits(64),
            "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
        }
        if fault != "no_usage":
            pt, ct = tokens(prompt_chars), tokens(len(content))
            completion["usage"] = {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct}
        if fault == "malformed_json":
            body = b'{"id": "chatcmpl-garbled", "choices": [{"message": {"content": "unterminat\x00}} <html>oops'
        else:
            body = json.dumps(completion).encode()
        if fault == "truncated":
            return self.respond(s, http_response(200, body[: len(body) // 2], length=len(body) + 4096), "close")
        if fault == "slow_drip":
            return self.respond(s, http_response(200, body), "drip", rule.get("drip_ms", 50) / 1000.0)
        extra = [("X-Filler", "f" * 200 * 1024)] if fault == "giant_header" else ()
        self.respond(s, http_response(200, body, extra=extra), after)


def write_port_file(path, port):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, path)


async def amain(args):
    rules, default = load_rules(args.replies)
    state = State(args, rules, default)

    server = await asyncio.get_running_loop().create_server(lambda: Conn(state), args.host, args.port,
                                                             backlog=4096, reuse_address=True)
    port = server.sockets[0].getsockname()[1]
    if args.port_file:
        write_port_file(args.port_file, port)
    if args.verbose:
        sys.stderr.write(f"sandq-fake-llm: listening on {args.host}:{port}, {len(rules)} rules\n")
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    server.close()
    for c in list(state.conns):
        c.close()
    return 0


class OneLineParser(argparse.ArgumentParser):
    """Bad arguments are one line on stderr and exit 2 (docs/configuration.md,
    "Command line"), not argparse's usage block."""

    def error(self, message):
        sys.stderr.write(f"sandq-fake-llm: {message} (sandq-fake-llm --help lists the options)\n")
        sys.exit(2)


def main():
    ap = OneLineParser(prog="sandq-fake-llm", description="A fake OpenAI-compatible LLM for sandq tests.",
                       allow_abbrev=False)
    ap.add_argument("--version", action="version", version=f"sandq-fake-llm {VERSION}")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True, help="the port to listen on; 0 picks a free one")
    ap.add_argument("--port-file", help="write the bound port here once listening")
    ap.add_argument("--replies", help="JSONL rule file")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--latency-ms", type=float, default=0, help="added to every answer")
    ap.add_argument("--latency-jitter-ms", type=float, default=0, help="uniform +- jitter")
    ap.add_argument("--latency-dist", choices=("uniform", "exp"), default="uniform")
    ap.add_argument("--error-rate", type=float, default=0, help="fraction answered 500/503")
    ap.add_argument("--rate-limit-rate", type=float, default=0, help="fraction answered 429 + Retry-After")
    ap.add_argument("--verbose", action="store_true")
    if len(sys.argv) < 2:  # no port, no anything: say how, do not listen somewhere random
        ap.print_usage(sys.stderr)
        return 2
    args = ap.parse_args()
    if not 0 <= args.port <= 65535:
        ap.error(f"--port {args.port}: must be 0-65535")
    # The host's problems are one line each, never a traceback.
    try:
        return asyncio.run(amain(args))
    except OSError as e:
        if args.replies and e.filename == args.replies:
            sys.stderr.write(f"sandq-fake-llm: --replies {args.replies}: {e.strerror}\n")
            return 2
        sys.stderr.write(f"sandq-fake-llm: cannot listen on {args.host}:{args.port}: {e.strerror or e}\n")
        return 1
    except UnicodeDecodeError as e:
        sys.stderr.write(f"sandq-fake-llm: --replies {args.replies}: not UTF-8 text ({e.reason} at byte {e.start})\n")
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
