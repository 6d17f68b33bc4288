#!/bin/sh
# redis_readback.sh: what the producer and the worker read back from Redis
# is checked before use. Real redis-server, the fake LLM, one
# worker:
#   1. duplicate ids and objects without an id (--no-validate, raw LPUSH):
#      every copy settles its batch, `--wait` ends 0 and says so;
#   2. a damaged rollout hash (window_s -100, stage -3): no crash, no
#      nonsense written; `rollout status` names the field; `rollout abort`
#      repairs it;
#   3. --out: a symlink, a FIFO or a directory is refused and left alone; a
#      regular file is replaced through a temporary file in its directory;
#      the user's FILE.tmp (a file or a FIFO) is never touched;
#   4. a result that is not BSON is named, left out of --out, exit 6
#      (push --wait and results in every format);
#   5. dead letter: damaged entries are kept and named by `requeue --all`,
#      a record without a payload is refused, `dead list` escapes control
#      characters and shows absurd times as such;
#   6. a server announcing a reply array of 2^31-1 elements (sentinel,
#      cluster, plain URL) is refused at once, nothing allocated.
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
PY=/usr/bin/python3
$PY -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson) is not installed"
P="$SQ_BIN/sandq-producer"
[ -x "$P" ] || sq_fail "$P is not built"
sq_start_redis
R() { sq_redis_cli "$@"; }

# ---- a worker with two providers (the rollout needs both names) ----
sq_bg llm "$SQ_BIN/sandq-fake-llm" --port 0 --port-file "$SQ_TMP/llm.port"
sq_wait_for "test -s $SQ_TMP/llm.port" 10 || sq_fail "fake LLM did not start"
lp=$(cat "$SQ_TMP/llm.port")
cat >"$SQ_TMP/w.json" <<JSON
{"providers": [
   {"name": "base", "base_url": "http://127.0.0.1:$lp/v1", "model": "fake-coder", "weight": 1},
   {"name": "cand", "base_url": "http://127.0.0.1:$lp/v1", "model": "fake-coder", "weight": 0}],
 "risk": "off", "scratch_root": "$SQ_TMP/scratch", "metrics_flush_ms": 200}
JSON
cfg="--config $SQ_TMP/w.json"
start_worker() {
  sq_bg w1 "$SQ_BIN/sandq-worker" serve $cfg --worker-id w1
}

# 2 first (before any task): a damaged rollout must not take the worker down.
# window_s -100 made a negative window count a size_t (SIGSEGV); stage -3
# indexed the plan's stages before their start.
R HSET 'sq:{default}:rollout' state running candidate cand baseline base stages 10,30,70,100 pct 10 stage 0 \
  window_s -100 hold_s 1 min_requests 1 min_samples 1 version 3 >/dev/null
start_worker
# The worker reads the rollout once it is ready (seconds on a busy host).
sq_wait_for "grep -q 'rollout state is damaged.*window_s' '$SQ_TMP/w1.log' || ! kill -0 $SQ_PID_w1" 60 || true
sleep 1 # and uses it
kill -0 "$SQ_PID_w1" 2>/dev/null || { tail -20 "$SQ_TMP/w1.log" >&2; sq_fail "worker died on window_s -100"; }
grep -q "rollout state is damaged.*window_s" "$SQ_TMP/w1.log" || { tail -20 "$SQ_TMP/w1.log" >&2; sq_fail "worker did not name window_s"; }
sq_run st1 "$P" rollout $cfg status
sq_assert_rc 1 st1
sq_assert_has st1.err "window_s"
sq_assert_has st1.err "rollout abort"
sq_assert_eq "$(R HGET 'sq:{default}:rollout' pct)" 10 "pct after a damaged window (nothing written)"
# A new version, so the worker reads it again (and says so) rather than
# passing the check before it looked.
R HSET 'sq:{default}:rollout' window_s 5 stage -3 version 4 >/dev/null
sq_wait_for "grep -q \"rollout state is damaged.*'stage' = '-3'\" '$SQ_TMP/w1.log' || ! kill -0 $SQ_PID_w1" 60 || true
kill -0 "$SQ_PID_w1" 2>/dev/null || sq_fail "worker died on stage -3"
grep -q "rollout state is damaged.*'stage' = '-3'" "$SQ_TMP/w1.log" ||
  { tail -20 "$SQ_TMP/w1.log" >&2; sq_fail "worker did not read stage -3"; }
sq_run st2 "$P" rollout $cfg status
sq_assert_rc 1 st2
sq_assert_has st2.err "'stage' = '-3'"
sq_assert_eq "$(R HGET 'sq:{default}:rollout' pct)" 10 "pct after stage -3 (nothing written)"
sq_assert_not_has w1.log "gets -"
sq_run ab "$P" rollout $cfg abort
sq_assert_rc 0 ab
sq_run st3 "$P" rollout $cfg status
sq_assert_rc 0 st3
sq_assert_has st3.out "state: aborted"
sq_assert_eq "$(R HGET 'sq:{default}:rollout' stage)" 0 "stage after the repair"
sq_assert_eq "$(R HGET 'sq:{default}:rollout' window_s)" 5 "a sound field is kept by the repair"
sq_run cl "$P" rollout $cfg clear
sq_assert_rc 0 cl

# 1. Duplicate ids: 20 copies of one id and two objects without an id, as
#    --no-validate pushes them. Every copy runs; one result per id is kept;
#    the batch still finishes and --wait says so.
: >"$SQ_TMP/dup.jsonl"
i=0; while [ $i -lt 20 ]; do echo '{"id": "same", "code": "print(1)"}' >>"$SQ_TMP/dup.jsonl"; i=$((i + 1)); done
echo '{"code": "print(2)"}' >>"$SQ_TMP/dup.jsonl"
echo '{"id": 17, "code": "print(3)"}' >>"$SQ_TMP/dup.jsonl"
sq_run dup "$P" push $cfg --no-validate --batch dup --wait --timeout-s 120 "$SQ_TMP/dup.jsonl"
sq_assert_rc 0 dup
sq_assert_has dup.err "19 task(s) of batch dup repeated an id"
grep -Eq '^ *duplicate +19$' "$SQ_TMP/dup.out" || sq_fail "summary: $(cat "$SQ_TMP/dup.out")"
sq_assert_eq "$(R HGET 'sq:{default}:batch:dup' done)" 3 "results kept (same + two raw ids)"
sq_assert_eq "$(R HLEN 'sq:{default}:results:dup')" 3 "results stored in the batch itself"
sq_assert_eq "$(R HLEN 'sq:{default}:results:_invalid')" 0 "nothing filed under _invalid"
# the same task into the same batch again: the batch grows and finishes again
echo '{"id": "same", "code": "print(1)"}' >"$SQ_TMP/one.jsonl"
sq_run dup2 "$P" push $cfg --no-validate --batch dup --wait --timeout-s 60 "$SQ_TMP/one.jsonl"
sq_assert_rc 0 dup2
sq_assert_eq "$(R HGET 'sq:{default}:batch:dup' total)" 23 "total after a second push"
# the order a client may use: LPUSH first, then HINCRBY total; --wait still ends
R LPUSH 'sq:{default}:tasks' '{"id":"late","batch":"late","code":"print(1)"}' >/dev/null
sq_wait_for "redis-cli -p $SQ_REDIS_PORT HGET 'sq:{default}:batch:late' done | grep -qx 1" 30 || sq_fail "late task not run"
R HINCRBY 'sq:{default}:batch:late' total 1 >/dev/null
sq_run late "$P" status late
sq_assert_rc 0 late
sq_assert_has late.out "finished"

# 3. --out targets. Results are put the way a worker stores them, then a
#    push into that batch finds it finished at once (no worker needed).
kill "$SQ_PID_w1" 2>/dev/null; wait "$SQ_PID_w1" 2>/dev/null
printf '{"id":"a","code":"1"}\n{"id":"b","code":"1"}\n' >"$SQ_TMP/two.jsonl"
prep() { # prep BATCH: two stored results a, b and their counters
  for id in a b; do
    $PY -c 'import sys, bson; sys.stdout.buffer.write(bson.encode({"_id": sys.argv[1], "status": "passed"}))' "$id" |
      R -x HSET "sq:{o}:results:$1" "$id" >/dev/null
  done
  R HSET "sq:{o}:batch:$1" done 2 status:passed 2 >/dev/null
}
mkdir -p "$SQ_TMP/outdir"
echo keep >"$SQ_TMP/outdir/real"
ln -s real "$SQ_TMP/outdir/link"
mkfifo "$SQ_TMP/outdir/fifo"
# refused before anything is pushed
sq_run link "$P" push --queue o --batch o1 --out "$SQ_TMP/outdir/link" "$SQ_TMP/two.jsonl"
sq_assert_rc 2 link
sq_assert_has link.err "symbolic link"
[ -L "$SQ_TMP/outdir/link" ] || sq_fail "the symlink was replaced"
sq_assert_eq "$(cat "$SQ_TMP/outdir/real")" keep "the link's target"
sq_run fifo "$P" push --queue o --batch o1 --out "$SQ_TMP/outdir/fifo" "$SQ_TMP/two.jsonl"
sq_assert_rc 2 fifo
sq_assert_has fifo.err "FIFO"
[ -p "$SQ_TMP/outdir/fifo" ] || sq_fail "the FIFO was replaced"
# results --out and report --html share the one writer (producer/report.c)
sq_run rlink "$P" results --queue o o1 --out "$SQ_TMP/outdir/link"
sq_assert_rc 2 rlink
sq_assert_has rlink.err "symbolic link"
sq_run rfifo "$P" report --queue o o1 --html "$SQ_TMP/outdir/fifo"
sq_assert_rc 2 rfifo
sq_assert_has rfifo.err "FIFO"
[ -L "$SQ_TMP/outdir/link" ] && [ -p "$SQ_TMP/outdir/fifo" ] || sq_fail "results/report replaced a link or a FIFO"
sq_run dir "$P" push --queue o --batch o1 --out "$SQ_TMP/outdir" "$SQ_TMP/two.jsonl"
sq_assert_rc 2 dir
sq_assert_has dir.err "directory"
sq_assert_eq "$(R EXISTS 'sq:{o}:batch:o1')" 0 "tasks pushed for a refused --out"
prep o1
chmod 640 "$SQ_TMP/outdir/real"
sq_run reg "$P" push --queue o --batch o1 --out "$SQ_TMP/outdir/real" "$SQ_TMP/two.jsonl"
sq_assert_rc 0 reg
sq_assert_has reg.err "wrote 2 result(s)"
sq_assert_eq "$($PY -c 'import sys, bson; print(len(bson.decode_all(open(sys.argv[1], "rb").read())))' "$SQ_TMP/outdir/real")" 2 \
  "documents in a replaced regular file"
sq_assert_eq "$(stat -c %a "$SQ_TMP/outdir/real")" 640 "the replaced file keeps its mode"
ls -a "$SQ_TMP/outdir" | grep -q 'sandq-out' && sq_fail "temporary file left behind"
prep o3
sq_run new "$P" push --queue o --batch o3 --out "$SQ_TMP/outdir/new.bson" "$SQ_TMP/two.jsonl"
sq_assert_rc 0 new
[ -f "$SQ_TMP/outdir/new.bson" ] || sq_fail "a new path was not written"
# FILE.tmp belongs to the user: the checks before work never open or remove
# it (a FIFO there hung the command; a file there was deleted)
echo mine >"$SQ_TMP/outdir/kept.bson.tmp"
mkfifo "$SQ_TMP/outdir/piped.bson.tmp" "$SQ_TMP/outdir/page.html.tmp"
prep o4
sq_run tmpfile "$P" push --queue o --batch o4 --out "$SQ_TMP/outdir/kept.bson" "$SQ_TMP/two.jsonl"
sq_assert_rc 0 tmpfile
sq_assert_eq "$(cat "$SQ_TMP/outdir/kept.bson.tmp")" mine "the user's FILE.tmp"
sq_run tmpfifo timeout 20 "$P" results --queue o o4 --out "$SQ_TMP/outdir/piped.bson"
sq_assert_rc 0 tmpfifo
sq_run tmphtml timeout 20 "$P" report --queue o o4 --html "$SQ_TMP/outdir/page.html"
sq_assert_rc 0 tmphtml
[ -p "$SQ_TMP/outdir/piped.bson.tmp" ] && [ -p "$SQ_TMP/outdir/page.html.tmp" ] || sq_fail "a FIFO at FILE.tmp was touched"
[ -s "$SQ_TMP/outdir/piped.bson" ] && [ -s "$SQ_TMP/outdir/page.html" ] || sq_fail "results/report beside FILE.tmp wrote nothing"
ls -a "$SQ_TMP/outdir" | grep -q 'sandq-out' && sq_fail "temporary file left behind"

# 4. A value that is not BSON in the results hash.
prep o2
R HSET 'sq:{o}:results:o2' c 'not bson at all' >/dev/null
R HINCRBY 'sq:{o}:batch:o2' done 1 >/dev/null
printf '{"id":"a","code":"1"}\n{"id":"b","code":"1"}\n{"id":"c","code":"1"}\n' >"$SQ_TMP/three.jsonl"
sq_run bad "$P" push --queue o --batch o2 --out "$SQ_TMP/outdir/o2.bson" "$SQ_TMP/three.jsonl"
sq_assert_rc 6 bad
sq_assert_has bad.err "result 'c' of batch o2 is not a valid BSON document"
sq_assert_has bad.err "wrote 2 result(s)"
sq_assert_eq "$($PY -c 'import sys, bson; print(" ".join(d["_id"] for d in bson.decode_all(open(sys.argv[1], "rb").read())))' \
  "$SQ_TMP/outdir/o2.bson")" "a b" "documents in --out beside a bad value"
# results: the same rule in every format (it wrote the bad value verbatim into
# --out F.bson, exit 0, and the file did not decode)
for f in bson jsonl csv; do
  sq_run "rbad-$f" "$P" results --queue o o2 --format "$f" --out "$SQ_TMP/outdir/r2.$f"
  sq_assert_rc 6 "rbad-$f"
  sq_assert_has "rbad-$f.err" "result 'c' of batch o2 is not a valid BSON document"
  sq_assert_has "rbad-$f.err" "wrote 2 result(s)"
  grep -q 'not bson' "$SQ_TMP/outdir/r2.$f" && sq_fail "results --format $f wrote the bad value"
done
sq_assert_eq "$($PY -c 'import sys, bson; print(" ".join(d["_id"] for d in bson.decode_all(open(sys.argv[1], "rb").read())))' \
  "$SQ_TMP/outdir/r2.bson")" "a b" "results --out beside a bad value"
sq_assert_eq "$(grep -c '^[abc],' "$SQ_TMP/outdir/r2.csv")" 2 "CSV rows beside a bad value"
# Numbers and strings read back are checked (UBSan: a signed overflow
# summing tokens, NaN converted to an integer): tokens near INT64_MAX, NaN
# and infinite times and costs, an ESC sequence in a status, invalid UTF-8
# and a long kind in a reason.
$PY - <<'EOF' | R -x HSET 'sq:{o}:results:o5' n1 >/dev/null
import sys, bson
sys.stdout.buffer.write(bson.encode({"_id": "n1", "status": "failed\x1b[2J", "reason": "KindZ: x",
    "llm": {"provider": "p", "model": "m", "prompt_tokens": bson.Int64(2**63 - 1), "completion_tokens": bson.Int64(2**63 - 1),
            "cost_usd": float("nan")},
    "timings": {"queue_ms": float("nan"), "llm_ms": float("inf"), "exec_ms": -1e300, "total_ms": float("nan")}}))
EOF
$PY - <<'EOF' | R -x HSET 'sq:{o}:results:o5' n2 >/dev/null
import sys, bson
sys.stdout.buffer.write(bson.encode({"_id": "n2", "status": "failed", "reason": "AVeryLongFailureKindThatGoesOnPastTheColumnWidth: y",
    "llm": {"provider": "p", "model": "m", "prompt_tokens": bson.Int64(2**62), "completion_tokens": 5, "cost_usd": float("inf")},
    "timings": {"queue_ms": 1, "llm_ms": 2, "exec_ms": 3, "total_ms": 6}}))
EOF
R HSET 'sq:{o}:batch:o5' total 2 done 2 finished_at_ms 1 >/dev/null
# the invalid UTF-8: the reason's bytes are rewritten raw (bson refuses to encode them)
$PY - "$SQ_REDIS_PORT" <<'EOF'
import redis, sys
r = redis.Redis(port=int(sys.argv[1]))
v = r.hget("sq:{o}:results:o5", "n1")
i = v.index(b"Kind")
assert v[i + 4:i + 5] == b"Z"
r.hset("sq:{o}:results:o5", "n1", v[:i + 4] + b"\xff" + v[i + 5:])
EOF
# (n1's status is no status name: a sample without a verdict, accepted here)
sq_run num "$P" report --queue o o5 --allow-missing
sq_assert_rc 0 num
sq_run numj "$P" report --queue o o5 --json --allow-missing
sq_assert_rc 0 numj
sq_run numc "$P" results --queue o o5 --format csv
sq_assert_rc 0 numc
$PY - "$SQ_TMP/num.out" "$SQ_TMP/numj.out" "$SQ_TMP/numc.out" <<'EOF'
import json, sys
text, js, csv = (open(f, "rb").read() for f in sys.argv[1:4])
for name, b in (("text", text), ("json", js), ("csv", csv)):
    assert b"\x1b" not in b, name + " passes an ESC sequence"
    b.decode("utf-8")  # valid UTF-8, or this raises
    assert b"-9223372036854775808" not in b and b"nan" not in b.lower().replace(b"nan_", b""), name
d = json.loads(js)
assert all(g["prompt_tokens"] >= 0 and g["completion_tokens"] >= 0 for g in d["llm"]), d["llm"]
assert all(g["cost_usd"] == 0 for g in d["llm"]), d["llm"]
assert d["latency_ms"]["total"]["count"] == 1 and d["latency_ms"]["total"]["p50"] == 6, d["latency_ms"]
assert b"AVeryLongFailureKindThatGoesOnPas..." in text, text
EOF
[ $? = 0 ] || sq_fail "numbers and strings read back"
# a worker's last-seen score of -inf (ZADD): health judges it, no abort
R ZADD 'sq:{o}:workers' -inf w-inf >/dev/null
sq_run hinf "$P" health --queue o
[ "$rc" -le 1 ] || { cat "$SQ_TMP/hinf.err" >&2; sq_fail "health on a -inf score: exit $rc"; }

# 5. The dead letter.
R HSET 'sq:{o}:dead' 1 '{not json' >/dev/null
R HSET 'sq:{o}:dead' 2 '{"id":2,"reason":"no payload here"}' >/dev/null
R HSET 'sq:{o}:dead' 3 '{"id":3,"priority":"n","payload":"{\"id\":\"t3\"}","dead_at_ms":1e300,"task_id":"evil\u001b[31mred"}' >/dev/null
R ZADD 'sq:{o}:dead:index' 1 1 2 2 3 3 >/dev/null
sq_run list "$P" dead --queue o list
sq_assert_rc 0 list
sq_assert_has list.out '(bad time)'
sq_assert_has list.out 'evil\x1b[31mred'
sq_assert_has list.out '(damaged record'
printf '\033' >"$SQ_TMP/esc"
grep -qF "$(cat "$SQ_TMP/esc")" "$SQ_TMP/list.out" && sq_fail "dead list printed a raw escape code"
sq_run rq2 "$P" dead --queue o requeue 2
sq_assert_rc 1 rq2
sq_assert_has rq2.err "no payload"
sq_assert_eq "$(R HEXISTS 'sq:{o}:dead' 2)" 1 "a record without a payload is kept"
sq_run rqa "$P" dead --queue o requeue --all
sq_assert_rc 1 rqa
sq_assert_has rqa.out "requeued 1 task(s)"
sq_assert_has rqa.err "entry 1 kept: not a JSON object"
sq_assert_has rqa.err "entry 2 kept: no payload"
sq_assert_eq "$(R HLEN 'sq:{o}:dead')" 2 "damaged entries kept"
sq_assert_eq "$(R LINDEX 'sq:{o}:tasks' -1)" '{"id":"t3"}' "the sound entry requeued"

# 6. A server whose every reply announces an array of 2^31-1 elements (a
# hostile or broken sentinel, cluster node or server): refused before
# anything is allocated, within the probes' timeouts (it cost gigabytes and
# a hang). A fake server on loopback.
$PY -c '
import socket, sys, threading
s = socket.socket()
s.bind(("127.0.0.1", 0)); s.listen(16)
print(s.getsockname()[1], flush=True)
def serve(c):
    try:
        while c.recv(65536):
            c.sendall(b"*2147483647\r\n")
    except OSError:
        pass
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
' >"$SQ_TMP/huge.port" &
SQ_PIDS="$SQ_PIDS $!"
sq_wait_for "[ -s '$SQ_TMP/huge.port' ]" 10 || sq_fail "the fake server did not start"
port=$(cat "$SQ_TMP/huge.port")
for url in "redis-sentinel://127.0.0.1:$port/mymaster" "redis-cluster://127.0.0.1:$port" "redis://127.0.0.1:$port"; do
  timeout 30 "$SQ_BIN/sandq-producer" status b1 --redis "$url" >"$SQ_TMP/huge.out" 2>"$SQ_TMP/huge.err"
  rc=$?
  [ "$rc" = 1 ] || { cat "$SQ_TMP/huge.err" >&2; sq_fail "$url: exit $rc, want 1 (124: it hung)"; }
  grep -q "a reply of 2147483647 elements refused" "$SQ_TMP/huge.err" || { cat "$SQ_TMP/huge.err" >&2; sq_fail "$url: refusal not named"; }
done
echo "redis_readback: a reply array of 2^31-1 elements refused (sentinel, cluster, plain)"

echo "redis_readback: all checks passed"
