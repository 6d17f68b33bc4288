#!/bin/sh
# bad_input3.sh: the third round of hostile inputs, through the real
# producer and a real redis-server (no worker: each batch is written into
# Redis as the worker would leave it):
#   1. no --out ever replaces a file with fewer results than the batch has
#      done (wait --out after results --out --delete, results --out); a
#      batch with damaged counters writes only to a new file (1b)
#   2. import apps refuses an fn_name that is not an identifier and inputs
#      that are not argument lists, naming the row and the field
#   5. batches: a score of inf or NaN, a member name with escape codes, a
#      damaged batch: each named and skipped, the others still listed
#   8. an unclosed prompt-template placeholder is refused
#   9. the metrics listener answers fresh probes past 80 slow clients
# (Fields twice, carried files under build names and a NUL in a case's
# stdin: tests/unit/formats/test_task.c, tests/unit/config/test_config.c;
# the open placeholder also in tests/unit/producer/test_prompt_template.c;
# the clients' own: clients/python/tests, clients/node/test.)
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
sq_start_redis
P="$SQ_BIN/sandq-producer"
K='sq:{default}'
# result FILE: a small valid BSON document {"status": "ok"} in FILE
result() { printf '\024\000\000\000\002status\000\003\000\000\000ok\000\000' >"$1"; }

# 1. Batch ev: two tasks done, finished; one stored result (the other
# deleted as results --delete would). wait --out and results --out must
# leave the user's file as it was.
now=$(date +%s)000
result "$SQ_TMP/r.bson"
sq_redis_cli HSET "$K:batch:ev" total 2 done 2 dead 0 duplicate 0 finished 1 finished_at_ms "$now" \
  finished_total 2 created_at_ms "$now" status:ok 2 >/dev/null
sq_redis_cli ZADD "$K:batches" "$now" ev >/dev/null
sq_redis_cli -x HSET "$K:results:ev" a <"$SQ_TMP/r.bson" >/dev/null
echo precious >"$SQ_TMP/ev.bson"
sq_run wait1 "$P" wait ev --timeout-s 30 --out "$SQ_TMP/ev.bson"
[ "$rc" = 1 ] || { cat "$SQ_TMP/wait1.err" >&2; sq_fail "wait --out with a result missing: exit $rc, want 1"; }
sq_assert_has wait1.err "batch ev has 1 stored result(s) of 2 done"
sq_assert_has wait1.err "ev.bson not written"
[ "$(cat "$SQ_TMP/ev.bson")" = precious ] || sq_fail "wait --out overwrote the file with fewer results"
for fmt in bson jsonl csv; do
  sq_run res1 "$P" results ev --format $fmt --out "$SQ_TMP/ev.bson"
  [ "$rc" = 1 ] || { cat "$SQ_TMP/res1.err" >&2; sq_fail "results --format $fmt --out with a result missing: exit $rc"; }
  sq_assert_has res1.err "batch ev has 1 stored result(s) of 2 done"
  [ "$(cat "$SQ_TMP/ev.bson")" = precious ] || sq_fail "results --out overwrote the file with fewer results"
done
# every result gone (results --out --delete ran): still nothing overwritten
sq_redis_cli DEL "$K:results:ev" >/dev/null
sq_run wait0 "$P" wait ev --timeout-s 30 --out "$SQ_TMP/ev.bson"
[ "$rc" = 1 ] || { cat "$SQ_TMP/wait0.err" >&2; sq_fail "wait --out with no result left: exit $rc, want 1"; }
sq_assert_has wait0.err "batch ev has 0 stored result(s) of 2 done"
[ "$(cat "$SQ_TMP/ev.bson")" = precious ] || sq_fail "wait --out emptied the file"
ls "$SQ_TMP"/.sandq-out-* >/dev/null 2>&1 && sq_fail "a temporary file was left behind"
# both results there: written
sq_redis_cli -x HSET "$K:results:ev" a <"$SQ_TMP/r.bson" >/dev/null
sq_redis_cli -x HSET "$K:results:ev" b <"$SQ_TMP/r.bson" >/dev/null
sq_run wait2 "$P" wait ev --timeout-s 30 --out "$SQ_TMP/ev.bson"
[ "$rc" = 0 ] || { cat "$SQ_TMP/wait2.err" >&2; sq_fail "wait --out with every result: exit $rc"; }
sq_assert_has wait2.err "wrote 2 result(s)"
[ "$(wc -c <"$SQ_TMP/ev.bson")" -ge 40 ] || sq_fail "wait --out did not write both results"
sq_run res2 "$P" results ev --out "$SQ_TMP/ev2.bson"
[ "$rc" = 0 ] || { cat "$SQ_TMP/res2.err" >&2; sq_fail "results --out with every result: exit $rc"; }
echo "bad_input3: no --out replaces a file with fewer results than the batch has done"

# 2. import apps: fn_name is pasted into the tests, so it must be a plain
# identifier; call-based inputs must be argument lists.
PY=/usr/bin/python3
$PY - "$SQ_TMP" <<'PY'
import json, sys
d = sys.argv[1]
def row(fn, inputs, outputs, pid=1):
    return {"problem_id": pid, "question": "Twice.", "solutions": json.dumps(["def f(x):\n    return 2 * x\n"]),
            "input_output": json.dumps({"fn_name": fn, "inputs": inputs, "outputs": outputs})}
bad = {"lambda": row("(lambda *a: __want)", [[1]], [2]), "class": row("class", [[1]], [2]),
       "dotted": row("os.system", [[1]], [2]), "nul": row("f\0 or True", [[1]], [2]),
       "digit": row("2f", [[1]], [2]), "inputs": row("f", [1, 2], [2, 4])}
for name, r in bad.items():
    open(f"{d}/apps-{name}.jsonl", "w").write(json.dumps(row("f", [[1]], [2], 0)) + "\n" + json.dumps(r) + "\n")
open(f"{d}/apps-good.jsonl", "w").write(json.dumps(row("f_2", [[1], [3]], [2, 6])) + "\n")
PY
for bad in lambda class dotted digit; do
  sq_run apps "$P" import apps "$SQ_TMP/apps-$bad.jsonl" --canonical
  [ "$rc" != 0 ] || sq_fail "import apps: fn_name of apps-$bad accepted"
  sq_assert_has apps.err "apps-$bad.jsonl:2: input_output: fn_name '"
  sq_assert_has apps.err "' must be a Python identifier"
  [ ! -s "$SQ_TMP/apps.out" ] || sq_fail "import apps wrote tasks for apps-$bad"
done
sq_run apps "$P" import apps "$SQ_TMP/apps-nul.jsonl" --canonical
[ "$rc" != 0 ] || sq_fail "import apps: fn_name with a NUL accepted"
sq_assert_has apps.err "apps-nul.jsonl:2: input_output: fn_name: holds a NUL character"
sq_run apps "$P" import apps "$SQ_TMP/apps-inputs.jsonl" --canonical
[ "$rc" != 0 ] || sq_fail "import apps: inputs [1, 2] accepted"
sq_assert_has apps.err "apps-inputs.jsonl:2: input_output: inputs[0] must be a list of the arguments of f"
sq_run apps "$P" import apps "$SQ_TMP/apps-good.jsonl" --canonical
[ "$rc" = 0 ] || { cat "$SQ_TMP/apps.err" >&2; sq_fail "import apps refused fn_name f_2"; }
echo "bad_input3: import apps refuses an fn_name that is no identifier and inputs that are no argument lists"

# 5. batches: a score of inf (a cast of it was undefined and printed the
# year -292275055), a member with escape codes and a newline (forged a
# row), a batch with a damaged counter (listed nothing at all): each
# named on stderr and skipped; the good batch still listed, text and --json.
sq_redis_cli ZADD "$K:batches" +inf badscore >/dev/null
printf 'evil\033[31m\nforged  2026-01-01 00:00:00        1        1        1      0      0.0000  finished' |
  sq_redis_cli -x ZADD "$K:batches" "$now" >/dev/null 2>&1 ||
  { printf 'ZADD %s %s "evil\\x1b[31m\\nforged"\n' "$K:batches" "$now" | sq_redis_cli >/dev/null; }
sq_redis_cli ZADD "$K:batches" "$now" dmg >/dev/null
sq_redis_cli HSET "$K:batch:dmg" total abc done 1 >/dev/null
[ "$(sq_redis_cli ZCARD "$K:batches")" = 4 ] || sq_fail "the batches set does not hold the four members"
for mode in text json; do
  if [ $mode = json ]; then sq_run batches "$P" batches --json; else sq_run batches "$P" batches; fi
  [ "$rc" = 1 ] || { cat "$SQ_TMP/batches.err" >&2; sq_fail "batches ($mode) with damaged members: exit $rc, want 1"; }
  if [ $mode = json ]; then
    /usr/bin/python3 -c 'import json, sys; l = json.load(open(sys.argv[1])); assert [b["batch"] for b in l] == ["ev"], l' \
      "$SQ_TMP/batches.out" || { cat "$SQ_TMP/batches.out" >&2; sq_fail "batches --json did not list ev alone"; }
  else
    grep -q "^ev " "$SQ_TMP/batches.out" || { cat "$SQ_TMP/batches.out" >&2; sq_fail "batches did not list ev"; }
    [ "$(wc -l <"$SQ_TMP/batches.out")" = 2 ] || { cat "$SQ_TMP/batches.out" >&2; sq_fail "batches listed a damaged member"; }
  fi
  sq_assert_has batches.err "batch dmg skipped: "
  sq_assert_has batches.err "batch 'badscore' skipped: its score in the batches set is not a time in ms"
  sq_assert_has batches.err "skipped: its name is not a batch name"
  sq_assert_has batches.err "3 damaged batch(es) skipped"
  grep -q "$(printf '\033')" "$SQ_TMP/batches.out" "$SQ_TMP/batches.err" && sq_fail "an escape code reached the terminal"
  grep -q "292275055" "$SQ_TMP/batches.out" && sq_fail "a score of inf printed as a date"
  [ "$(grep -c . "$SQ_TMP/batches.err")" = 4 ] || { cat "$SQ_TMP/batches.err" >&2; sq_fail "a member's newline forged a line"; }
done
echo "bad_input3: batches names and skips each damaged batch, lists the rest"

# 1b. A batch whose counters are damaged: its results still go to a new
# file, but never over an existing one (whether all are there is unknown).
sq_redis_cli -x HSET "$K:results:dmg" a <"$SQ_TMP/r.bson" >/dev/null
sq_run dmgres "$P" results dmg --out "$SQ_TMP/dmg-new.bson"
[ "$rc" = 0 ] && [ -s "$SQ_TMP/dmg-new.bson" ] || { cat "$SQ_TMP/dmgres.err" >&2; sq_fail "results of a damaged batch to a new file: exit $rc"; }
sq_assert_has dmgres.err "its done count is unknown"
sq_run dmgres "$P" results dmg --out "$SQ_TMP/ev.bson"
[ "$rc" = 1 ] || { cat "$SQ_TMP/dmgres.err" >&2; sq_fail "results of a damaged batch over a file: exit $rc, want 1"; }
sq_assert_has dmgres.err "cannot tell whether all its results are stored (its counters are damaged)"
[ "$(wc -c <"$SQ_TMP/ev.bson")" -ge 40 ] || sq_fail "results of a damaged batch replaced a file"
echo "bad_input3: a damaged batch's results go to a new file only"

# 9. The producer's fleet view (metrics --listen): 80 slow clients from
# 127.0.0.1 (a header byte now and then), then 3 fresh /healthz probes
# from the same address: each answered (the per-address cap refused the
# newest connection, the probe: 1 of 3 got in).
pm=$(sq_free_port)
sq_bg fleet "$P" metrics --listen "127.0.0.1:$pm"
sq_wait_for "/usr/bin/python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $pm)).close()'" 30 ||
  { cat "$SQ_TMP/fleet.log" >&2; sq_fail "metrics --listen did not start"; }
/usr/bin/python3 - "$pm" <<'PY' || sq_fail "a probe from the slow clients' address got no answer"
import socket, sys, time
port = int(sys.argv[1])
slow = []
for _ in range(80):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    slow.append(s)
for k in range(3):
    p = socket.create_connection(("127.0.0.1", port), timeout=60)
    p.sendall(b"GET /healthz HTTP/1.0\r\n\r\n")
    reply, deadline = b"", time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            b = p.recv(4096)
        except (ConnectionResetError, socket.timeout):
            break
        if not b:
            break
        reply += b
    p.close()
    if not reply.startswith(b"HTTP/1.") or b" 200 " not in reply.split(b"\r\n")[0] + b" ":
        print("probe %d: %r" % (k + 1, reply[:200]), file=sys.stderr)
        sys.exit(1)
    for s in slow:  # a byte more on each slow connection still open
        try:
            s.send(b"x")
        except OSError:
            pass
PY
echo "bad_input3: metrics --listen answers probes past 80 slow clients of their own address"
