#!/bin/sh
# api.sh: `sandq-producer api` (docs/api.md), SandboxFusion's HTTP API in
# front of a real redis-server and a real worker, with plain HTTP (python's
# urllib): ping, python ok, a non-zero exit, stdin, a timeout, a cpp compile
# error and the compile cache, nodejs, java's Main, files in and out,
# FastAPI's 422 for an unknown language and a bad body, SandboxError for a
# language sandq does not run, the access log; POST /submit with the
# problem inline (config.provided_data): CommonOJDataset's stdin/stdout
# tests (SandboxFusion's line comparison: case, white space, floats) and
# AutoEvalDataset's test program (#<INSERT>, an asset file), its 400s and
# 422s; the server's own GET /metrics (promtool check metrics when
# promtool is installed, and the counts agree with the requests made). A second server (a queue no
# worker serves) checks the bearer token, the size cap, the cap on
# requests in flight (503) and the deadline (504). verl's own client
# (its verl/utils/reward_score/sandbox_fusion/utils.py, unchanged, from the
# verl checkout SANDQ_VERL_DIR names, or the file SANDQ_VERL_SANDBOX_UTILS
# names: the project does not ship another project's files) runs its
# check_correctness against the API when python3-requests is installed;
# with SANDQ_VERL_DIR and python3-pytest, verl's own pytest file for that
# client runs against it too (each part says SKIP without them). The
# commands of docs/api.md run as written (on this test's port). Last, a
# Redis that went away gives 503 without naming its address.
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
sq_need_worker_host
command -v curl >/dev/null || sq_skip "curl is not installed (scripts/install-deps.sh)"
sq_start_redis
unset SANDQ_LLM_BASE_URL
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
sq_bg w1 "$W" serve --worker-id api-1
sq_wait_for "grep -q 'ready in' $SQ_TMP/w1.log" 60 || { cat "$SQ_TMP/w1.log" >&2; sq_fail "the worker never got ready"; }
PORT=$(sq_free_port)
sq_bg api "$P" api --listen "127.0.0.1:$PORT"
sq_wait_for "curl -sf http://127.0.0.1:$PORT/v1/ping" 20 || { cat "$SQ_TMP/api.log" >&2; sq_fail "the API did not come up"; }
grep -q "serving queue default's SandboxFusion API on http://127.0.0.1:$PORT/" "$SQ_TMP/api.log" ||
  sq_fail "the API's start line: $(cat "$SQ_TMP/api.log")"

# 1. /run_code's shapes, by plain HTTP.
$PY - "http://127.0.0.1:$PORT" <<'PY' || { tail -20 "$SQ_TMP/api.log" >&2; sq_fail "the API's answers are wrong"; }
import base64, json, os, sys, urllib.error, urllib.request
url = sys.argv[1]

def call(path, body=None, method=None, raw=None, headers=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url + path, data=data, method=method or ("POST" if data is not None else "GET"),
                                 headers=dict({"Content-Type": "application/json"}, **(headers or {})))
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())

def run(**kw):
    code, r = call("/run_code", kw)
    assert code == 200, (code, r)
    assert list(r)[:6] == ["status", "message", "compile_result", "run_result", "executor_pod_name", "files"], r
    return r

assert call("/v1/ping") == (200, "pong")
code, ds = call("/list_datasets")
assert code == 200 and "humaneval" in ds and "mbpp" in ds, ds

r = run(code="print('hi')", language="python")
assert r["status"] == "Success" and r["message"] == "" and r["compile_result"] is None, r
rr = r["run_result"]
assert rr["status"] == "Finished" and rr["return_code"] == 0 and rr["stdout"] == "hi\n" and rr["stderr"] == "", rr
assert isinstance(rr["execution_time"], float) or rr["execution_time"] == 0, rr
assert r["sandq"]["status"] == "ok" and r["sandq"]["worker"] == "api-1", r

r = run(code="import sys\nprint('bye', file=sys.stderr)\nsys.exit(3)", language="python")
assert r["status"] == "Failed" and r["run_result"]["return_code"] == 3 and r["run_result"]["stderr"] == "bye\n", r

r = run(code="import sys\nprint(sys.stdin.read()[::-1])", language="python", stdin="abc")
assert r["status"] == "Success" and r["run_result"]["stdout"] == "cba\n", r
assert r["sandq"]["status"] == "ok" and "reason" not in r["sandq"], r   # the case's own verdict is not the run's

r = run(code="import time\nprint('start', flush=True)\ntime.sleep(30)", language="python", run_timeout=1)
rr = r["run_result"]
assert r["status"] == "Failed" and rr["status"] == "TimeLimitExceeded" and rr["return_code"] is None, r
assert rr["stdout"] == "start\n" and r["sandq"]["status"] == "timeout", r

r = run(code="x = bytearray(600 << 20)", language="python", memory_limit_MB=128)
assert r["status"] == "Failed" and r["run_result"]["return_code"] == 1, r
assert r["sandq"]["status"] == "memory_limit" and "MemoryError" in r["run_result"]["stderr"], r

r = run(code="import os\nos.system('id')", language="python")
assert r["status"] == "Failed" and r["run_result"]["return_code"] == 1 and "os.system" in r["run_result"]["stderr"], r
assert r["sandq"]["status"] == "blocked", r

have = lambda p: os.access(p, os.X_OK)
checked = []
if have("/usr/bin/g++"):
    r = run(code="int main() { return x; }", language="cpp")
    cr = r["compile_result"]
    assert r["status"] == "Failed" and r["run_result"] is None, r
    assert cr["status"] == "Finished" and cr["return_code"] != 0 and "error" in cr["stderr"], cr
    assert r["sandq"]["status"] == "compile_error", r
    src = "#include <iostream>\nint main() { int a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }\n"
    a = run(code=src, language="cpp", stdin="1 2")
    b = run(code=src, language="cpp", stdin="20 22")
    for x, want in ((a, "3\n"), (b, "42\n")):
        assert x["status"] == "Success" and x["run_result"]["stdout"] == want, x
        assert x["compile_result"]["status"] == "Finished" and x["compile_result"]["return_code"] == 0, x
    assert b["sandq"]["compile_cached"] is True, b   # one compile for the two requests
    checked.append("cpp")
if have("/usr/bin/node"):
    r = run(code="console.log(40 + 2)", language="nodejs")
    assert r["status"] == "Success" and r["run_result"]["stdout"] == "42\n" and r["compile_result"] is None, r
    checked.append("nodejs")
if have("/usr/bin/javac"):
    r = run(code="import java.util.*;\npublic class Main {\n  public static void main(String[] a) {\n"
                 "    System.out.println(new Scanner(System.in).nextInt() * 2);\n  }\n}\n", language="java", stdin="21\n")
    assert r["status"] == "Success" and r["run_result"]["stdout"] == "42\n", r
    checked.append("java")

inp = base64.b64encode(b"hello\n").decode()
r = run(code="tr a-z A-Z < in.txt > out.txt; mkdir -p d; printf x > 'd/a*b'", language="bash",
        files={"in.txt": inp, "ignored": None}, fetch_files=["out.txt", "d/a*b", "missing.txt"])
assert r["status"] == "Success", r
assert r["files"] == {"out.txt": base64.b64encode(b"HELLO\n").decode(), "d/a*b": "eA=="}, r["files"]

code, r = call("/run_code", {"code": "x", "language": "cobol"})
assert code == 422 and r["detail"][0]["type"] == "literal_error" and r["detail"][0]["loc"] == ["body", "language"], r
assert r["detail"][0]["input"] == "cobol" and "'python', 'cpp', 'nodejs'" in r["detail"][0]["msg"], r
code, r = call("/run_code", {"language": "python", "run_timeout": "soon"})
assert code == 422 and [(e["type"], e["loc"]) for e in r["detail"]] == [
    ("float_parsing", ["body", "run_timeout"]), ("missing", ["body", "code"])], r
code, r = call("/run_code", raw=b'{"code": ')
assert code == 422 and r["detail"][0]["type"] == "json_invalid", r
code, r = call("/run_code", {"code": "x", "language": "csharp"})
assert code == 200 and r["status"] == "SandboxError" and "not one sandq runs" in r["message"], r
code, r = call("/run_code", {"code": "x", "language": "python", "files": {"../up": "eA=="}})
assert code == 200 and r["status"] == "SandboxError" and "files" in r["message"], r
assert call("/nowhere")[0] == 404 and call("/run_code")[0] == 405
print("api: plain HTTP: python, stdin, exit 3, timeout, memory, blocked, files, 422s, SandboxError;", " ".join(checked))
PY

# 1b. POST /submit, the problem inline.
$PY - "http://127.0.0.1:$PORT" <<'PY' || { tail -20 "$SQ_TMP/api.log" >&2; sq_fail "the API's /submit answers are wrong"; }
import base64, json, sys, urllib.error, urllib.request
url = sys.argv[1]

def submit(body):
    req = urllib.request.Request(url + "/submit", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())

def oj(completion, tests, **config):
    return submit({"dataset": "my_oj", "id": 7, "completion": completion,
                   "config": dict({"dataset_type": "CommonOJDataset", "language": "python",
                                   "provided_data": {"id": 7, "content": "sum", "test": tests}}, **config)})

tests = [{"input": {"stdin": "1 2\n"}, "output": {"stdout": "3\nYES\n0.3333333\n"}},
         {"input": {"stdin": "20 22\n"}, "output": {"stdout": "42\nYES\n0.3333333"}}]
good = ("Here is my solution:\n```python\na, b = map(int, input().split())\nprint(a + b)\n"
        "print('yes  ')\nprint(1 / 3)\n```\nIt reads two numbers.")
code, r = oj(good, tests)
assert code == 200, (code, r)
assert list(r) == ["id", "accepted", "extracted_code", "full_code", "test_code", "tests", "extracted_type", "extra"], r
assert r["id"] == 7 and r["accepted"] is True and r["extracted_code"].startswith("a, b = map"), r
assert [t["passed"] for t in r["tests"]] == [True, True], r
t = r["tests"][1]
assert t["exec_info"]["status"] == "Success" and t["exec_info"]["run_result"]["stdout"] == "42\nyes  \n0.3333333333333333\n", t
assert t["test_info"] == tests[1], t
# one wrong test of two: not accepted, each test's own verdict
code, r = oj("a, b = map(int, input().split())\nprint(a + b if a < 10 else 0)\nprint('yes')\nprint(1/3)", tests)
assert code == 200 and r["accepted"] is False and [t["passed"] for t in r["tests"]] == [True, False], r
# a run that fails is not passed, whatever its stdout
code, r = oj("print(3)\nprint('yes')\nprint(1/3)\nraise SystemExit(1)", tests[:1])
assert code == 200 and r["accepted"] is False and r["tests"][0]["exec_info"]["status"] == "Failed", r

# AutoEvalDataset: the code at #<INSERT> of the test program, an asset file beside it
asset = {"data.txt": base64.b64encode(b"5\n").decode()}
row = {"id": "p1", "labels": {"programming_language": "python", "execution_language": "python"},
       "test": {"code": "#<INSERT>\n\nassert add(int(open('data.txt').read()), 1) == 6\n", "asset": asset}}
def auto(completion, row=row):
    return submit({"dataset": "mine", "id": "p1", "completion": completion,
                   "config": {"dataset_type": "AutoEvalDataset", "provided_data": row}})
code, r = auto("```python\ndef add(a, b):\n    return a + b\n```")
assert code == 200 and r["accepted"] is True and r["id"] == "p1", r
assert r["full_code"].startswith("def add(a, b):") and "assert add(" in r["full_code"] and r["extra"] == {}, r
assert len(r["tests"]) == 1 and r["tests"][0]["passed"] is True and r["tests"][0]["exec_info"]["status"] == "Success", r
code, r = auto("```python\ndef add(a, b):\n    return a - b\n```")
assert code == 200 and r["accepted"] is False, r
ei = r["tests"][0]["exec_info"]
assert ei["status"] == "Failed" and "AssertionError" in ei["run_result"]["stderr"], ei
# the test as a JSON string (as a table's column holds it), no marker: the test goes after the code
row2 = dict(row, labels=json.dumps(row["labels"]), test=json.dumps({"code": "assert add(2, 2) == 4", "asset": {}}))
code, r = auto("def add(a, b):\n    return a + b\n\nif __name__ == '__main__':\n    raise SystemExit(3)\n", row2)
assert code == 200 and r["accepted"] is True and "SystemExit" not in r["full_code"], r

# refusals, in FastAPI's shapes
code, r = submit({"dataset": "x", "id": 1, "config": {}})
assert code == 422 and [(e["type"], e["loc"]) for e in r["detail"]] == [("missing", ["body", "completion"])], r
code, r = submit({"dataset": "x", "id": 1, "completion": "", "config": {"dataset_type": "CommonOJDataset", "language": "cobol"}})
assert code == 422 and r["detail"][0]["loc"] == ["body", "config", "language"], r
code, r = submit({"dataset": "humaneval_python", "id": 1, "completion": "", "config": {}})
assert code == 400 and "no eval class found for dataset humaneval_python" in r["detail"], r
code, r = submit({"dataset": "x", "id": 1, "completion": "", "config": {"dataset_type": "CommonOJDataset", "language": "python"}})
assert code == 400 and "config.provided_data" in r["detail"], r
code, r = oj(good, tests, language=None)
assert code == 400 and r["detail"] == "config.language field must exist for CommonOJDataset, got None", r
code, r = submit({"dataset": "x", "id": 1, "completion": "", "config": {"dataset_type": "MBPPDataset", "provided_data": {}}})
assert code == 400 and "eval class MBPPDataset not found" in r["detail"], r
print("api: /submit: CommonOJ right, one wrong test, a failed run; AutoEval at #<INSERT> with an asset, failing, "
      "after the code; 422s and 400s")
PY

# 1c. The server's own /metrics: valid Prometheus text, counting what was asked.
curl -sf "http://127.0.0.1:$PORT/metrics" >"$SQ_TMP/api.prom" || sq_fail "GET /metrics failed"
if command -v promtool >/dev/null; then
  promtool check metrics <"$SQ_TMP/api.prom" || { cat "$SQ_TMP/api.prom" >&2; sq_fail "promtool rejects the API's /metrics"; }
else
  echo "api: SKIP promtool check metrics: promtool is not installed (Debian package prometheus)"
fi
$PY - "$SQ_TMP/api.prom" "$SQ_TMP/api.log" <<'PY' || { cat "$SQ_TMP/api.prom" >&2; sq_fail "the API's /metrics do not count its requests"; }
import collections, re, sys
samples = {}
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    series, value = line.rsplit(" ", 1)
    samples[series] = float(value)
# the access log has one line per request answered; the counters agree with it (this scrape not yet counted)
log = collections.Counter()
for line in open(sys.argv[2]):
    m = re.search(r'api: \S+ "(?:GET|POST) (\S+)" (\d+) ', line)
    if m:
        path = m.group(1) if m.group(1) in ("/run_code", "/submit", "/v1/ping", "/list_datasets", "/metrics") else "other"
        log[(path, m.group(2))] += 1
got = {(k.split('path="')[1].split('"')[0], k.split('code="')[1].split('"')[0]): v
       for k, v in samples.items() if k.startswith("sandq_api_requests_total{")}
# this scrape is counted once it is answered, and its log line comes then too: left out
log.pop(("/metrics", "200"), None)
assert got == dict(log), (got, dict(log))
assert got[("/run_code", "200")] >= 10 and got[("/run_code", "422")] >= 3 and got[("/submit", "200")] >= 6, got
assert got[("/submit", "400")] >= 4 and got[("other", "404")] == 1, got
assert samples["sandq_api_requests_in_flight"] == 0, samples
for path in ("/run_code", "/submit"):
    count = samples['sandq_api_request_duration_seconds_count{path="%s"}' % path]
    assert count == sum(v for (p, _), v in got.items() if p == path), (path, count)
    assert samples['sandq_api_request_duration_seconds_bucket{path="%s",le="+Inf"}' % path] == count
    assert samples['sandq_api_request_duration_seconds_sum{path="%s"}' % path] > 0
print("api: /metrics: requests by path and status agree with the access log; in flight 0; latency histograms")
PY
grep -q '"POST /run_code" 200 [0-9]* [0-9]* ms python Success' "$SQ_TMP/api.log" &&
  grep -q '"POST /run_code" 422 ' "$SQ_TMP/api.log" || sq_fail "no access-log lines: $(tail -5 "$SQ_TMP/api.log")"

# 2. verl's client, unchanged, against the API.
VERL_DIR=${SANDQ_VERL_DIR:-}
VERL=${SANDQ_VERL_SANDBOX_UTILS:-}
[ -n "$VERL" ] || [ -z "$VERL_DIR" ] || VERL=$VERL_DIR/verl/utils/reward_score/sandbox_fusion/utils.py
if [ -z "$VERL" ] || [ ! -r "$VERL" ]; then
  echo "api: SKIP verl's client: set SANDQ_VERL_DIR to a verl checkout (or SANDQ_VERL_SANDBOX_UTILS to its" \
    "verl/utils/reward_score/sandbox_fusion/utils.py)"
elif $PY -c 'import requests' 2>/dev/null; then
  $PY - "http://127.0.0.1:$PORT/run_code" "$VERL" <<'PY' || sq_fail "verl's check_correctness"
import importlib.util, logging, sys
logging.disable(logging.CRITICAL)
spec = importlib.util.spec_from_file_location("verl_sandbox_fusion_utils", sys.argv[2])
verl = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verl)
url = sys.argv[1]
OK = "import sys\nd = sys.stdin.read()\nprint({'input1': 'output1', 'input2': 'output2'}.get(d, 'unexpected'))\n"
io2 = {"inputs": ["input1", "input2"], "outputs": ["output1\n", "output2\n"]}
io1 = {"inputs": ["input1"], "outputs": ["output1\n"]}
res, meta = verl.check_correctness(url, io2, OK)
assert res == [True, True] and meta[0]["stdout"] == "output1\n", (res, meta)
res, meta = verl.check_correctness(url, io2, "print('wrong')")
assert res == [False, False] and meta[0]["status"] == "wrong_answer", (res, meta)
res, meta = verl.check_correctness(url, io1, "raise ValueError('runtime')")
assert res == [-2] and meta[0]["status"] == "runtime_error", (res, meta)
res, meta = verl.check_correctness(url, io1, "import time\ntime.sleep(30)", timeout=2)
assert res == [-3] and meta[0]["status"] == "timeout", (res, meta)
res, meta = verl.check_correctness(url, io2, "a=b", language="cpp")
assert res == [-4, -4] and meta[0]["status"] == "compile_error", (res, meta)
print("api: verl's check_correctness: right, wrong, runtime error, timeout, compile error")
PY
else
  echo "api: SKIP verl's client: python3-requests is not installed (scripts/install-deps.sh)"
fi

# 2b. verl's own pytest file for this client, from the checkout SANDQ_VERL_DIR
# names, against an API whose worker serves verl as docs/api.md says
# (getattr recorded, for its fn_name harness). Its utils.py is loaded
# without verl/__init__.py, which needs torch and the rest of verl's
# training stack: a pytest plugin made here puts empty packages for verl,
# verl.utils, ... whose paths are the checkout's.
VERL_TEST=tests/utils/reward_score/reward_score/test_sandbox_fusion_on_cpu.py
if [ -z "$VERL_DIR" ]; then
  echo "api: SKIP verl's pytest: set SANDQ_VERL_DIR to a verl checkout"
elif [ ! -r "$VERL_DIR/$VERL_TEST" ] || [ ! -r "$VERL" ]; then
  sq_fail "SANDQ_VERL_DIR=$VERL_DIR is not a verl checkout with $VERL_TEST and verl/utils/reward_score/sandbox_fusion/utils.py"
elif ! $PY -c 'import pytest, requests' 2>/dev/null; then
  echo "api: SKIP verl's pytest: python3-pytest or python3-requests is not installed (scripts/install-deps.sh)"
else
  echo '{"policy": {"actions": {"getattr": "record"}}}' >"$SQ_TMP/verl-worker.json"
  SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch-verl" sq_bg wv "$W" serve --queue verl --worker-id api-verl \
    --config "$SQ_TMP/verl-worker.json"
  sq_wait_for "grep -q 'ready in' $SQ_TMP/wv.log" 60 || { cat "$SQ_TMP/wv.log" >&2; sq_fail "verl's worker never got ready"; }
  PV=$(sq_free_port)
  sq_bg apiv "$P" api --queue verl --listen "127.0.0.1:$PV"
  sq_wait_for "curl -sf http://127.0.0.1:$PV/v1/ping" 20 || { cat "$SQ_TMP/apiv.log" >&2; sq_fail "verl's API did not come up"; }
  mkdir -p "$SQ_TMP/verl-plugin"
  cat >"$SQ_TMP/verl-plugin/sq_verl_packages.py" <<'PY'
"""verl's packages down to sandbox_fusion as empty modules over the checkout's folders."""
import os, sys, types
root = os.environ["SANDQ_VERL_DIR"]
parent = None
for name in ("verl", "verl.utils", "verl.utils.reward_score", "verl.utils.reward_score.sandbox_fusion"):
    m = types.ModuleType(name)
    m.__path__ = [os.path.join(root, *name.split("."))]
    sys.modules[name] = m
    if parent is not None:
        setattr(parent, name.rsplit(".", 1)[1], m)
    parent = m
PY
  # 100 programs of 10 s of CPU each at once is a test for 100 sandboxes, not for 2 cores
  (cd "$SQ_TMP" && SANDBOX_FUSION_URL="http://127.0.0.1:$PV/run_code" SANDQ_VERL_DIR="$VERL_DIR" \
    PYTHONPATH="$SQ_TMP/verl-plugin" PYTHONDONTWRITEBYTECODE=1 \
    timeout 400 $PY -m pytest -q -rs -p sq_verl_packages -p no:cacheprovider \
    -k 'not test_integration_concurrency_all_timeout' "$VERL_DIR/$VERL_TEST") \
    >"$SQ_TMP/verl-pytest.out" 2>&1 || { tail -60 "$SQ_TMP/verl-pytest.out" >&2; tail -20 "$SQ_TMP/apiv.log" >&2
    sq_fail "verl's $VERL_TEST against the API"; }
  grep -q "SKIPPED" "$SQ_TMP/verl-pytest.out" && { cat "$SQ_TMP/verl-pytest.out" >&2; sq_fail "verl's pytest skipped cases"; }
  echo "api: verl's $VERL_TEST: $(tail -1 "$SQ_TMP/verl-pytest.out")"
  kill -TERM "$SQ_PID_apiv" "$SQ_PID_wv"
fi

# 3. The bounds, on a server of a queue no worker serves.
P2=$(sq_free_port)
SANDQ_API_TOKEN=t0ken sq_bg api2 "$P" api --queue idle --listen "127.0.0.1:$P2" --max-request-kib 1 --max-in-flight 1 \
  --slack-s 0
sq_wait_for "curl -sf http://127.0.0.1:$P2/v1/ping" 20 || { cat "$SQ_TMP/api2.log" >&2; sq_fail "the second API did not come up"; }
$PY - "http://127.0.0.1:$P2" "$SQ_REDIS_PORT" <<'PY' || { tail -20 "$SQ_TMP/api2.log" >&2; sq_fail "the API's bounds"; }
import json, socket, sys, threading, time, urllib.error, urllib.request
url, redis_port = sys.argv[1], int(sys.argv[2])

def call(path, body, token=None, chunked=False):
    data = json.dumps(body).encode()
    h = {"Content-Type": "application/json"}
    if token: h["Authorization"] = "Bearer " + token
    if chunked: data = iter([data])   # no Content-Length: urllib sends it chunked
    req = urllib.request.Request(url + path, data=data, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read()), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), dict(e.headers)

def llen():  # the idle queue's waiting tasks (RESP by hand: no client library needed)
    s = socket.create_connection(("127.0.0.1", redis_port))
    s.sendall(b"*2\r\n$4\r\nLLEN\r\n$15\r\nsq:{idle}:tasks\r\n")
    n = int(s.recv(64).split(b"\r\n")[0][1:])
    s.close()
    return n

small = {"code": "print(1)", "language": "python", "compile_timeout": 0, "run_timeout": 3}
code, r, h = call("/run_code", small)
assert code == 401 and r == {"detail": "Not authenticated"} and h.get("WWW-Authenticate") == "Bearer", (code, r, h)
assert call("/run_code", small, token="wrong")[0] == 401
big = dict(small, code="#" + "x" * 2000)
code, r, _ = call("/run_code", big, token="t0ken")
assert code == 413 and "larger than 1024 bytes" in r["detail"], (code, r)
code, r, _ = call("/run_code", big, token="t0ken", chunked=True)
assert code == 413, (code, r)
# one request in flight (no worker: it waits), the next is 503, the first ends 504 at its deadline
first = {}
t = threading.Thread(target=lambda: first.update(zip(("code", "body", "h"), call("/run_code", small, token="t0ken"))))
t.start()
deadline = time.time() + 30
while llen() < 1:
    assert time.time() < deadline, "the first request never reached the queue"
    time.sleep(0.05)
code, r, _ = call("/run_code", small, token="t0ken")
assert code == 503 and "too many requests in flight" in r["detail"], (code, r)
t.join()
assert first["code"] == 504 and "no result within" in first["body"]["detail"], first
# a /submit of more tests than may be in flight: 503 at once
oj = {"dataset": "x", "id": 1, "completion": "print(1)", "config": {"dataset_type": "CommonOJDataset",
      "language": "python", "provided_data": {"test": [{"input": {"stdin": ""}, "output": {"stdout": "1"}}] * 2}}}
code, r, _ = call("/submit", oj, token="t0ken")
assert code == 503 and "more tests than" in r["detail"], (code, r)
# /metrics asks the token too
code, r, _ = call("/metrics", {}, token=None)
assert code == 401, (code, r)
print("api: token 401, size cap 413 (with and without a length), in flight 503 (a /submit too), deadline 504")
PY

# 4. docs/api.md's commands, on this test's port.
awk '/^```sh$/ {on = 1; next} /^```/ {on = 0} on' "$SQ_SRC/docs/api.md" | sed "s/127\.0\.0\.1:8080/127.0.0.1:$PORT/g" \
  >"$SQ_TMP/doc.sh"
[ "$(grep -c . "$SQ_TMP/doc.sh")" -ge 8 ] || sq_fail "only $(grep -c . "$SQ_TMP/doc.sh") command lines in docs/api.md"
kill -TERM "$SQ_PID_api"
sq_wait_for "! kill -0 $SQ_PID_api" 30 || sq_fail "the API did not stop on SIGTERM"
wait "$SQ_PID_api"; rc=$?
[ "$rc" -eq 0 ] || sq_fail "the API exited $rc after SIGTERM, want 0"
(cd "$SQ_TMP" && PATH="$SQ_BIN:$PATH" sh -e "$SQ_TMP/doc.sh") >"$SQ_TMP/doc.out" 2>"$SQ_TMP/doc.err" ||
  { cat "$SQ_TMP/doc.out" "$SQ_TMP/doc.err" >&2; sq_fail "a command of docs/api.md failed"; }
for want in '"pong"' '"stdout":"hello\n"' '"return_code":3,"stdout":"ABC\n"' '"run_result":null' \
  '"files":{"out.txt":"SEVMTE8K"}' '"type":"literal_error"' ' 422' '"humaneval"' '{"id":1,"accepted":true,' \
  'sandq_api_requests_total{path="/run_code",code="200"} 4'; do
  grep -qF "$want" "$SQ_TMP/doc.out" || { cat "$SQ_TMP/doc.out" >&2; sq_fail "docs/api.md's output lacks $want"; }
done
echo "api: docs/api.md's commands ran as written"

# 5. Redis gone: 503, and no answer names its address.
kill -TERM "$SQ_PID_redis"
sq_wait_for "! redis-cli -p $SQ_REDIS_PORT ping" 20 || sq_fail "redis did not stop"
out=$(curl -s -w ' %{http_code}' -H 'Authorization: Bearer t0ken' "http://127.0.0.1:$P2/run_code" \
  -d '{"code": "print(1)", "language": "python"}')
case "$out" in *' 503') ;; *) sq_fail "a push to a Redis that is gone answered: $out" ;; esac
case "$out" in *"$SQ_REDIS_PORT"* | *redis:* | *127.0.0.1*) sq_fail "the answer names the Redis address: $out" ;; esac
echo "api: all checks passed"
