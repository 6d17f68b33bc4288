#!/usr/bin/python3
# sandq-fake-llm: the project's stand-in for a paid, remote, OpenAI-compatible
# LLM. A real HTTP server (stdlib only) that answers POST /v1/chat/completions
# from a JSONL rule file and can misbehave on purpose (status codes, garbled or
# truncated bodies, resets, hangs) so that the client's error paths are tested
# over real sockets.
#
# Rule file: one JSON object per line (blank lines and lines starting with '#'
# are ignored):
#   {"match": "<substring of the last user message>", "content": "<reply>"}
# optional keys:
#   "status": HTTP status (default 200; with a non-2xx status the body is an
#             OpenAI-style error whose message is "error_message" if given)
#   "delay_ms": wait before answering (every matching request)
#   "fault": "malformed_json" | "no_usage" | "truncated" | "reset" | "hang" |
#            "retry_after" (status defaults to 429; header value from
#            "retry_after_s", default 1)
#   "times": N  the status/fault applies to the first N matching requests
#               only, then "content" is served normally
#   "content_repeat": N  the content is repeated N times (large replies)
#   "default": true  the fallback rule when nothing matches
# Without a default rule and without a match, the reply is a tiny ```python
# block printing "hello".
#
# GET /stats returns counters: total requests, hits per rule, and how many
# requests carried an Authorization header (its value is never stored).

import argparse
import json
import math
import os
import random
import select
import signal
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULTS = {"malformed_json", "no_usage", "truncated", "reset", "hang", "retry_after"}
MAX_BODY_BYTES = 16 * 1024 * 1024
HANG_MAX_S = 600.0
BUILTIN_CONTENT = "```python\nprint(\"hello\")\n```\n"


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
            if not isinstance(rule.get("content", ""), str):
                sys.exit(f"sandq-fake-llm: {path}:{lineno}: content must be a string")
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
    """The text of one chat message (string content or a list of text parts)."""
    content = msg.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class State:
    """Counters and per-rule 'times' budgets, shared by the handler threads."""

    def __init__(self, rules, default, verbose):
        self.rules, self.default, self.verbose = rules, default, verbose
        self.lock = threading.Lock()
        self.total = 0
        self.hits = {}
        self.auth = 0
        self.stopping = threading.Event()

    def pick(self, user_text, has_auth):
        """Returns (rule, abnormal): abnormal is False once 'times' is used up."""
        rule = next((r for r in self.rules if r["match"] in user_text), self.default)
        key = rule_key(rule)
        with self.lock:
            self.total += 1
            if has_auth:
                self.auth += 1
            n = self.hits.get(key, 0) + 1
            self.hits[key] = n
        abnormal = True
        if rule is not None and "times" in rule:
            abnormal = n <= int(rule["times"])
        return rule, abnormal

    def stats(self):
        with self.lock:
            return {"requests": self.total, "hits": dict(self.hits),
                    "authorization_headers": self.auth}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server_version = "sandq-fake-llm/1"

    def version_string(self):
        return self.server_version

    def log_message(self, fmt, *args):  # noqa: N802 (stdlib name)
        if self.server.state.verbose:
            sys.stderr.write("sandq-fake-llm: %s - %s\n" % (self.address_string(), fmt % args))

    def send_json(self, status, obj, extra_headers=()):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra_headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def send_error_json(self, status, message, etype="invalid_request_error", extra_headers=()):
        self.send_json(status, {"error": {"message": message, "type": etype, "code": None}},
                       extra_headers)

    def do_GET(self):  # noqa: N802
        if self.path == "/stats":
            self.send_json(200, self.server.state.stats())
        elif self.path == "/health":
            self.send_json(200, {"ok": True})
        else:
            self.send_error_json(404, f"no such path: {self.path}", "not_found")

    def read_body(self):
        length = self.headers.get("Content-Length")
        if length is None:
            return None, "missing Content-Length"
        try:
            n = int(length)
        except ValueError:
            return None, "bad Content-Length"
        if n < 0 or n > MAX_BODY_BYTES:
            return None, "request body too large"
        return self.rfile.read(n), None

    def do_POST(self):  # noqa: N802
        if self.path != "/v1/chat/completions":
            self.read_body()
            self.send_error_json(404, f"no such path: {self.path}", "not_found")
            return
        raw, err = self.read_body()
        if err:
            self.close_connection = True
            self.send_error_json(400, err)
            return
        try:
            req = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            self.send_error_json(400, f"request body is not JSON: {e}")
            return
        if not isinstance(req, dict):
            self.send_error_json(400, "request body must be a JSON object")
            return
        model = req.get("model")
        if not isinstance(model, str) or not model:
            self.send_error_json(400, "'model' must be a non-empty string")
            return
        messages = req.get("messages")
        if not isinstance(messages, list) or not messages:
            self.send_error_json(400, "'messages' must be a non-empty list")
            return
        for m in messages:
            if not isinstance(m, dict) or not isinstance(m.get("role"), str):
                self.send_error_json(400, "each message needs a string 'role'")
                return
        user_text = ""
        for m in messages:
            if m["role"] == "user":
                user_text = message_text(m)
        prompt_chars = sum(len(message_text(m)) for m in messages)

        state = self.server.state
        rule, abnormal = state.pick(user_text, "Authorization" in self.headers)
        self.answer(rule, abnormal, model, prompt_chars)

    def answer(self, rule, abnormal, model, prompt_chars):
        rule = rule or {"content": BUILTIN_CONTENT}
        delay_ms = rule.get("delay_ms", 0)
        if delay_ms:
            time.sleep(delay_ms / 1000.0)
        content = rule.get("content", "") * int(rule.get("content_repeat", 1))
        fault = rule.get("fault") if abnormal else None
        status = int(rule.get("status", 429 if fault == "retry_after" else 200)) if abnormal else 200

        if fault == "reset":
            self.reset()
            return
        if fault == "hang":
            self.hang()
            return
        if status != 200:
            headers = []
            if fault == "retry_after":
                headers.append(("Retry-After", str(rule.get("retry_after_s", 1))))
            msg = rule.get("error_message", f"fake-llm: simulated HTTP {status}")
            etype = "rate_limit_error" if status == 429 else (
                "server_error" if status >= 500 else "invalid_request_error")
            self.send_error_json(status, msg, etype, headers)
            return

        completion = {
            "id": "chatcmpl-fake-%016x" % random.getrandbits(64),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0,
                         "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}],
        }
        if fault != "no_usage":
            pt, ct = tokens(prompt_chars), tokens(len(content))
            completion["usage"] = {"prompt_tokens": pt, "completion_tokens": ct,
                                   "total_tokens": pt + ct}
        if fault == "malformed_json":
            body = b'{"id": "chatcmpl-garbled", "choices": [{"message": {"content": "unterminat'
            body += b"\x00}} <html>oops"
        else:
            body = json.dumps(completion).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if fault == "truncated":
            self.send_header("Content-Length", str(len(body) + 4096))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def reset(self):
        """Closes the connection with an RST (SO_LINGER 0) and sends nothing."""
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        # The socket's fd stays open while rfile/wfile hold it; close all three.
        self.rfile.close()
        self.wfile.close()
        self.connection.close()

    def hang(self):
        """Never answers; returns once the client closes its end (or at shutdown)."""
        self.close_connection = True
        deadline = time.monotonic() + HANG_MAX_S
        state = self.server.state
        while time.monotonic() < deadline and not state.stopping.is_set():
            try:
                r, _, _ = select.select([self.connection], [], [], 0.2)
                if r and not self.connection.recv(1, socket.MSG_PEEK):
                    return
            except OSError:
                return


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        if self.state.verbose:
            super().handle_error(request, client_address)


def write_port_file(path, port):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description="A fake OpenAI-compatible LLM for sandq tests.")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 picks a free port")
    ap.add_argument("--port-file", help="write the bound port here once listening")
    ap.add_argument("--replies", help="JSONL rule file")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    random.seed(args.seed)
    rules, default = load_rules(args.replies)
    server = Server((args.host, args.port), Handler)
    server.state = State(rules, default, args.verbose)

    def stop(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    port = server.server_address[1]
    if args.port_file:
        write_port_file(args.port_file, port)
    if args.verbose:
        sys.stderr.write(f"sandq-fake-llm: listening on {args.host}:{port}, {len(rules)} rules\n")
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.state.stopping.set()
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
