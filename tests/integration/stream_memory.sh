#!/bin/sh
# stream_memory.sh: the producer's memory does not grow with the batch.
# Two batches of stored results, 2,000 and 20,000 (about 1 KB each, 200
# problems, a mix of statuses, as a worker writes them), loaded straight
# into a real redis-server; then wait --out, results (bson, jsonl, csv),
# report --json and report --html on each, under /usr/bin/time: each
# command's peak RSS on the large batch is within 4 MiB of the small one's
# (reading 20,000 results whole took about 25 MiB more); and push of 2,000
# and 100,000 tasks. Also results --out --delete:
# the results leave Redis only once the file holds them all, and never
# with a result left out of it.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
PY=/usr/bin/python3
[ -x /usr/bin/time ] || sq_skip "/usr/bin/time is not installed (apt-get install time): peak RSS cannot be measured"
$PY -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson module) is not installed"
sq_env_init
sq_start_redis
P=$SQ_BIN/sandq-producer
# Under AddressSanitizer freed memory waits in a quarantine (256 MiB): the
# peak would measure the quarantine, not what is held. No effect otherwise.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"

load() { # load BATCH N: N results of BATCH, and its counters (finished)
  $PY - "$1" "$2" "$SQ_TMP/$1.resp" <<'PY' || sq_fail "generating $1"
import os, sys, bson, datetime
batch, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, os.environ["SQ_SRC"] + "/tests/lib")
from resp import cmd
statuses = ["passed", "passed", "failed", "runtime_error", "timeout"]
with open(path, "wb") as f:
    for i in range(n):
        st = statuses[i % 5]
        doc = {"_id": f"{batch}/{i}", "batch": batch, "status": st, "attempts": 1,
               "reason": None if st == "passed" else f"{st}: case {i % 17}",
               "stdout": "x" * (500 + i % 100), "stderr": "",
               "metadata": {"task_id": f"P/{i % 200}", "dataset": "synthetic"},
               "llm": {"provider": "fake", "model": "m", "prompt_tokens": bson.Int64(100 + i % 50),
                       "completion_tokens": bson.Int64(40), "cost_usd": 0.0001 * (1 + i % 3), "temperature": 0.8},
               "jail": {"exit_code": 0, "wall_ms": bson.Int64(5)},
               "timings": {"queue_ms": bson.Int64(i % 5000), "llm_ms": bson.Int64(300 + i % 700),
                           "exec_ms": bson.Int64(3 + i % 40), "total_ms": bson.Int64(400 + i % 900),
                           "all_attempts_ms": bson.Int64(400 + i % 900)},
               "finished_at": datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)}
        if doc["reason"] is None:
            del doc["reason"]
        f.write(cmd("HSET", f"sq:{{default}}:results:{batch}", doc["_id"], bson.encode(doc)))
    f.write(cmd("HSET", f"sq:{{default}}:batch:{batch}", "total", n, "done", n, "dead", 0, "finished", 1,
                "finished_at_ms", 1, "finished_total", n))
PY
  redis-cli -p "$SQ_REDIS_PORT" --pipe <"$SQ_TMP/$1.resp" >/dev/null || sq_fail "loading $1"
  [ "$(sq_redis_cli HLEN "sq:{default}:results:$1")" = "$2" ] || sq_fail "$1: not every result loaded"
}
load small 2000
load large 20000

peak() { # peak NAME CMD...: the peak RSS of CMD in KiB; CMD must exit 0
  name=$1; shift
  /usr/bin/time -f %M -o "$SQ_TMP/rss" "$@" >"$SQ_TMP/cmd.out" 2>"$SQ_TMP/cmd.err" ||
    { cat "$SQ_TMP/cmd.err" >&2; sq_fail "$name failed"; }
  tail -1 "$SQ_TMP/rss"
}
for c in "wait --out" "results bson" "results jsonl" "results csv" "report --json" "report --html"; do
  for b in small large; do
    case $c in
      "wait --out") kib=$(peak "$c $b" "$P" wait "$b" --out "$SQ_TMP/$b.bson") ;;
      "results bson") kib=$(peak "$c $b" "$P" results "$b" --out "$SQ_TMP/$b.r.bson") ;;
      "results jsonl") kib=$(peak "$c $b" "$P" results "$b" --format jsonl --out "$SQ_TMP/$b.jsonl") ;;
      "results csv") kib=$(peak "$c $b" "$P" results "$b" --format csv --out "$SQ_TMP/$b.csv") ;;
      "report --json") kib=$(peak "$c $b" "$P" report "$b" --json) ; cp "$SQ_TMP/cmd.out" "$SQ_TMP/$b.report.json" ;;
      *) kib=$(peak "$c $b" "$P" report "$b" --html "$SQ_TMP/$b.html") ;;
    esac
    eval "rss_$b=$kib"
  done
  echo "stream_memory: $c: peak RSS $rss_small KiB at 2,000 results, $rss_large KiB at 20,000"
  [ $((rss_large - rss_small)) -lt 4096 ] || sq_fail "$c: peak RSS grew by $((rss_large - rss_small)) KiB from 2,000 to 20,000 results (want < 4 MiB)"
done

# push alone (no worker): a file is read line by line and its ids kept as
# 64-bit hashes, so 100,000 tasks cost about 1 MiB more than 2,000 (the
# ids themselves took about 16 MiB more).
for n in 2000 100000; do
  awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"push-%07d\",\"code\":\"x = %d\",\"metadata\":{\"task_id\":\"p%d\"}}\n", i, i, i % 100 }' \
    >"$SQ_TMP/push-$n.jsonl"
  eval "rss_$n=$(peak "push $n" "$P" push --batch "push-$n" "$SQ_TMP/push-$n.jsonl")"
  [ "$(sq_redis_cli HGET "sq:{default}:batch:push-$n" total)" = "$n" ] || sq_fail "push $n: not every task pushed"
done
echo "stream_memory: push: peak RSS $rss_2000 KiB at 2,000 tasks, $rss_100000 KiB at 100,000"
[ $((rss_100000 - rss_2000)) -lt 4096 ] || sq_fail "push: peak RSS grew by $((rss_100000 - rss_2000)) KiB from 2,000 to 100,000 tasks (want < 4 MiB)"
sq_redis_cli DEL 'sq:{default}:tasks' >/dev/null

# What was written is whole: every result once, in every format, and the report counted every one.
$PY - "$SQ_TMP" <<'PY' || sq_fail "the outputs of the large batch are not whole"
import sys, bson, json, csv
t = sys.argv[1]
want = {f"large/{i}" for i in range(20000)}
for f in ("large.bson", "large.r.bson"):
    ids = [d["_id"] for d in bson.decode_all(open(f"{t}/{f}", "rb").read())]
    assert len(ids) == 20000 and set(ids) == want, (f, len(ids))
assert open(f"{t}/large.bson", "rb").read() == open(f"{t}/large.r.bson", "rb").read()
assert {json.loads(l)["_id"] for l in open(f"{t}/large.jsonl")} == want
rows = list(csv.DictReader(open(f"{t}/large.csv", newline="")))
assert len(rows) == 20000 and {r["id"] for r in rows} == want
r = json.load(open(f"{t}/large.report.json"))
assert r["tasks"] == 20000 and r["problems"] == 200 and r["status_counts"]["passed"] == 8000, (r["tasks"], r["problems"])
import math
def nearest_rank(v, p):  # the definition the report states
    v = sorted(v)
    return v[max(0, math.ceil(p / 100 * len(v)) - 1)]
stages = {"queue": lambda i: i % 5000, "llm": lambda i: 300 + i % 700, "exec": lambda i: 3 + i % 40, "total": lambda i: 400 + i % 900}
for s, f in stages.items():
    v = [f(i) for i in range(20000)]
    got = r["latency_ms"][s]
    assert (got["p50"], got["p90"], got["p99"], got["max"]) == (nearest_rank(v, 50), nearest_rank(v, 90), nearest_rank(v, 99), max(v)), (s, got)
# The page's failing tasks: the first 100 by natural order of id, whatever
# order Redis gave them in, then how many more (3 of every 5 fail).
import re
page = open(f"{t}/large.html").read()
sec = page[page.index("<h2>Failing tasks</h2>"):]
sec = sec[:sec.index("</section>")]
ids = re.findall(r"<tr><td>(large/\d+)</td>", sec)
want_ids = [f"large/{i}" for i in range(20000) if i % 5 >= 2][:100]
assert ids == want_ids, ids[:8]
assert "11900 more;" in sec, sec[-300:]
PY

# --delete: only with a file; a stored value that is not BSON keeps every
# result in Redis; otherwise they leave once the file holds them.
set +e
"$P" results small --delete >/dev/null 2>"$SQ_TMP/del.err"; rc=$?
set -e
[ $rc -eq 2 ] && grep -q -- "--delete needs --out FILE" "$SQ_TMP/del.err" || { cat "$SQ_TMP/del.err"; sq_fail "--delete without --out: exit $rc"; }
sq_redis_cli HSET 'sq:{default}:results:small' broken 'not bson' >/dev/null
set +e
"$P" results small --out "$SQ_TMP/small.del.bson" --delete 2>"$SQ_TMP/del.err"; rc=$?
set -e
[ $rc -eq 6 ] && grep -q "nothing deleted" "$SQ_TMP/del.err" || { cat "$SQ_TMP/del.err"; sq_fail "--delete with a bad result: exit $rc"; }
[ "$(sq_redis_cli HLEN 'sq:{default}:results:small')" = 2001 ] || sq_fail "--delete removed results although one was left out"
sq_redis_cli HDEL 'sq:{default}:results:small' broken >/dev/null
"$P" results small --out "$SQ_TMP/small.del.bson" --delete 2>"$SQ_TMP/del.err" || { cat "$SQ_TMP/del.err"; sq_fail "--delete failed"; }
grep -q "deleted 2000 result(s) of batch small" "$SQ_TMP/del.err" || { cat "$SQ_TMP/del.err"; sq_fail "--delete said nothing"; }
[ "$(sq_redis_cli EXISTS 'sq:{default}:results:small')" = 0 ] || sq_fail "--delete left the results in Redis"
cmp -s "$SQ_TMP/small.del.bson" "$SQ_TMP/small.r.bson" || sq_fail "the file --delete wrote differs from the export before"
"$P" results small --out "$SQ_TMP/again.bson" 2>"$SQ_TMP/del.err" && sq_fail "results of a deleted batch succeeded"
grep -q "batch small has no results" "$SQ_TMP/del.err" || { cat "$SQ_TMP/del.err"; sq_fail "deleted batch not explained"; }
[ ! -e "$SQ_TMP/again.bson" ] || sq_fail "a file was written for a batch without results"
echo "stream_memory: results --out --delete: refused without a file, keeps everything when a result is left out, removes them once written"
