#!/bin/sh
# bad_input.sh: hostile inputs through the real producer, a real
# worker and a real redis-server; each must end as a clear error or an
# invalid_task result under the task's own id and batch:
#   1. a JSONL line of NUL bytes is an error naming the line (item 14)
#   2. a line that stamping takes past max_task_kib is refused by push (item 4)
#   3. a worker with a smaller max_task_kib than the producer files the task
#      under its own id and batch: --wait ends (item 4)
#   4. NUL in tests, ids with NUL or invalid UTF-8, unreadable metadata,
#      pushed raw: each invalid_task naming the field, no collision (5, 11, 12)
#   5. a field name with a newline and escape codes forges no worker log
#      line and reaches no terminal (item 10)
#   6. `health` with absurd numbers in a health entry (item 15)
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_env_init
PY=/usr/bin/python3
$PY -c 'import bson, redis' 2>/dev/null || sq_skip "python3-pymongo and python3-redis are not installed"
sq_start_redis
P="$SQ_BIN/sandq-producer"
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" SANDQ_LOG_LEVEL=info

# 1. A line of NUL bytes between two good ones.
{ echo '{"id":"a","code":"print(1)"}'; printf '\000\000\000\000\n'; echo '{"id":"b","code":"print(2)"}'; } >"$SQ_TMP/nul.jsonl"
sq_run nul "$P" push --batch nul "$SQ_TMP/nul.jsonl"
[ "$rc" = 1 ] || sq_fail "a line of NUL bytes: exit $rc, want 1"
sq_assert_has nul.err "nul.jsonl:2: task: not valid JSON"
[ "$(sq_redis_cli LLEN 'sq:{default}:tasks')" = 0 ] || sq_fail "pushed despite the NUL line"
echo "bad_input: a line of NUL bytes is an error naming line 2"

# 2. max_task_kib 4: a line of 4,090 bytes passes the parser but not once stamped.
echo '{"max_task_kib": 4}' >"$SQ_TMP/small.json"
$PY -c 'import json; s = "x" * 4060; print(json.dumps({"id": "edge", "code": "#" + s}, separators=(",", ":"))[:4096])' >"$SQ_TMP/edge.jsonl"
len=$(head -c -1 "$SQ_TMP/edge.jsonl" | wc -c)
[ "$len" -le 4096 ] || sq_fail "test line is $len bytes"
sq_run edge "$P" push --config "$SQ_TMP/small.json" --batch edge "$SQ_TMP/edge.jsonl"
[ "$rc" = 1 ] || sq_fail "a line too large once stamped: exit $rc, want 1"
sq_assert_has edge.err "edge.jsonl:1: task: "
sq_assert_has edge.err "bytes once stamped with batch and enqueued_at_ms ($len in the file), more than the 4096 allowed"
[ "$(sq_redis_cli LLEN 'sq:{default}:tasks')" = 0 ] || sq_fail "pushed a line the worker would refuse"
echo "bad_input: push refuses a line the stamp takes past max_task_kib"

# 3. The worker's max_task_kib (4) below the producer's (default 256).
cat >"$SQ_TMP/worker.json" <<JSON
{"max_task_kib": 4, "scratch_root": "$SQ_TMP/scratch"}
JSON
"$SQ_BIN/sandq-worker" serve --config "$SQ_TMP/worker.json" --worker-id w1 >>"$SQ_TMP/worker-w1.log" 2>&1 &
SQ_PIDS="$SQ_PIDS $!"
{ $PY -c 'print("{\"id\":\"big\",\"code\":\"#" + "x" * 6000 + "\",\"metadata\":{\"expect\":\"invalid_task\"}}")'
  echo '{"id":"small","code":"print(1)","metadata":{"expect":"ok"}}'; } >"$SQ_TMP/sizes.jsonl"
sq_run sizes "$P" push --batch sizes --wait --timeout-s 60 --out "$SQ_TMP/sizes.bson" "$SQ_TMP/sizes.jsonl"
[ "$rc" = 0 ] || { cat "$SQ_TMP/sizes.err" "$SQ_TMP/worker-w1.log" >&2; sq_fail "--wait on sizes: exit $rc, want 0"; }
$PY - "$SQ_TMP/sizes.bson" "$SQ_REDIS_PORT" <<'PY'
import bson, redis, sys
d = {x["_id"]: x for x in bson.decode_all(open(sys.argv[1], "rb").read())}
assert d["big"]["status"] == "invalid_task" and d["big"]["batch"] == "sizes", d["big"]
assert "more than the 4096 allowed (max_task_kib)" in d["big"]["reason"], d["big"]["reason"]
assert d["big"]["metadata"] == {"expect": "invalid_task"}, d["big"]
assert d["small"]["status"] == "ok", d["small"]
assert redis.Redis(port=int(sys.argv[2])).hlen("sq:{default}:results:_invalid") == 0
PY
echo "bad_input: a task too large for the worker is filed under its own id and batch"

# 4. Raw LPUSH: what the producer refuses, the worker refuses too.
$PY - "$SQ_REDIS_PORT" <<'PY'
import redis, sys
r = redis.Redis(port=int(sys.argv[1]))
tasks = [
    b'{"id":"nul-tests","batch":"raw","code":"def f(x): return x","tests":"assert f(1)==1\\u0000\\nassert f(2)==3"}',
    b'{"id":"t\\u0000one","batch":"raw","code":"print(1)"}',
    b'{"id":"t\\u0000two","batch":"raw","code":"print(2)"}',
    b'{"id":"a\xff","batch":"raw","code":"print(1)"}',
    b'{"id":"a\xfe","batch":"raw","code":"print(2)"}',
    b'{"id":"deep","batch":"raw","code":"print(1)","metadata":{"expect":"passed","a":' + b"[" * 120 + b"]" * 120 + b"}}",
    b'{"id":"bad-utf8-meta","batch":"raw","code":"print(1)","metadata":{"expect":"passed","k":"\xff"}}',
    b'{"id":"mem15","batch":"raw","code":"print(1)","limits":{"memory_mib":15}}',
    b'{"id":"inf","batch":"raw","code":"print(1)","limits":{"wall_ms":1e309},"enqueued_at_ms":1e19}',
]
for t in tasks:
    r.lpush("sq:{default}:tasks", t)
PY
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT LLEN 'sq:{default}:tasks')\" = 0 && test \"\$(redis-cli -p $SQ_REDIS_PORT HLEN 'sq:{default}:results:raw')\" = 9" 30 ||
  { tail -30 "$SQ_TMP/worker-w1.log" >&2; sq_fail "raw tasks did not all get results"; }
sleep 0.5
$PY - "$SQ_REDIS_PORT" <<'PY'
import bson, redis, sys
r = redis.Redis(port=int(sys.argv[1]))
raw = {k.decode(): bson.decode(v) for k, v in r.hgetall("sq:{default}:results:raw").items()}
# those without a readable id go under raw-<hash> in their own batch (docs/formats.md)
inv = [d for k, d in raw.items() if k.startswith("raw-")]
raw = {k: d for k, d in raw.items() if not k.startswith("raw-")}
assert r.hlen("sq:{default}:results:_invalid") == 0
assert set(raw) == {"nul-tests", "deep", "bad-utf8-meta", "mem15", "inf"}, sorted(raw)
assert all(d["status"] == "invalid_task" for d in raw.values()), raw
assert "tests: holds a NUL character" in raw["nul-tests"]["reason"], raw["nul-tests"]
assert "metadata: nested deeper than 64 levels" in raw["deep"]["reason"], raw["deep"]
assert "metadata: holds a string that is not valid UTF-8" in raw["bad-utf8-meta"]["reason"]
assert "limits.memory_mib: must be an integer in [16," in raw["mem15"]["reason"], raw["mem15"]
assert "limits.wall_ms" in raw["inf"]["reason"], raw["inf"]
# no id was cut or remapped: four results under raw ids, none under "t" or "a\ufffd"
assert len(inv) == 4, [d["reason"] for d in inv]
# Redis keeps a result's id as its field alone (docs/formats.md, stored form)
assert all("_id" not in d or d["_id"].startswith("raw-") for d in inv), inv
reasons = sorted(d["reason"] for d in inv)
assert sum("id: holds a NUL character" in x for x in reasons) == 2, reasons
assert sum("valid UTF-8" in x for x in reasons) == 2, reasons
PY
echo "bad_input: NUL, invalid UTF-8, deep metadata, memory_mib 15 and 1e309 are invalid_task naming the field"

# 5. A field name that carries a newline, a forged log line and escape codes.
$PY - "$SQ_REDIS_PORT" <<'PY'
import json, redis, sys
r = redis.Redis(port=int(sys.argv[1]))
forged = "x\n2026-01-01T00:00:00.000Z sandq-worker[1] ERROR forged:1 FORGED \x1b[2J\x1b]0;owned\x07"
r.lpush("sq:{default}:tasks", json.dumps({"id": "inject", "batch": "inj", "code": "print(1)", forged: 1}))
PY
sq_wait_for "test \"\$(redis-cli -p $SQ_REDIS_PORT HLEN 'sq:{default}:results:inj')\" = 1" 30 || sq_fail "no result for inject"
sleep 0.3
if grep -a '^2026-01-01T00:00:00.000Z' "$SQ_TMP/worker-w1.log"; then sq_fail "a field name forged a worker log line"; fi
if grep -qa "$(printf '\033')" "$SQ_TMP/worker-w1.log"; then sq_fail "an escape code reached the worker log"; fi
grep -qaF 'x\n2026-01-01T00:00:00.000Z sandq-worker[1] ERROR forged:1 FORGED \x1b[2J' "$SQ_TMP/worker-w1.log" ||
  { tail -5 "$SQ_TMP/worker-w1.log" >&2; sq_fail "the escaped field name is not in the log"; }
printf '%s\n' '{"id":"esc","code":"1","x\u001b[2J":1}' >"$SQ_TMP/esc.jsonl"
sq_run esc "$P" push --batch esc "$SQ_TMP/esc.jsonl"
[ "$rc" = 1 ] || sq_fail "esc: exit $rc"
if grep -qa "$(printf '\033')" "$SQ_TMP/esc.err"; then sq_fail "push printed an escape code"; fi
sq_assert_has esc.err 'x\x1b[2J: unknown field'
echo "bad_input: control characters are escaped in the worker log and on the producer's terminal"

# 6. health with absurd numbers: ages are computed in double, no overflow.
sq_redis_cli HSET 'sq:{default}:health' w-odd \
  '{"updated_ms": -9223372036854775808, "last_claim_ms": 1e300, "jail_layers": ["seccomp"]}' >/dev/null
sq_run health "$P" health w-odd
grep -q "worker w-odd" "$SQ_TMP/health.out" || { cat "$SQ_TMP/health.out" "$SQ_TMP/health.err" >&2; sq_fail "health"; }
if grep -q "runtime error" "$SQ_TMP/health.err"; then cat "$SQ_TMP/health.err" >&2; sq_fail "health: undefined behaviour"; fi
# the health record refuses the entry, naming the field (common/fleet/health.c)
grep -q "health entry unreadable: .*updated_ms" "$SQ_TMP/health.out" || { cat "$SQ_TMP/health.out" >&2; sq_fail "an entry from -2^63 ms is not named unreadable"; }
echo "bad_input: health survives absurd numbers"
