#!/bin/sh
# expected_shared.sh: the reference's expected values shared by the fleet
# through a real redis-server (sq:{Q}:cache:expected:<sha256>,
# docs/formats.md). A HumanEval+ problem (two tiers) and a calls-judge
# problem (bash) run on one worker, which stores the three values; a
# second worker judges the same problems from Redis without running any
# reference, with the same results; entries planted damaged are ignored
# (the reference runs, the tasks are judged right) and replaced; a forged
# but well-formed entry is used as it is (the trust boundary,
# docs/security.md); two workers on a new problem at once store its
# values once, the first writer's.
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
sq_need_worker_host

$PY - "$SQ_TMP" "$SQ_SRC/tests/data/calls/bash.json" <<'PY'
import json, sys
d, bash = sys.argv[1], json.load(open(sys.argv[2]))
he = {"task_id": "HumanEval/0", "prompt": "def add(a, b):\n    \"\"\"Sum.\"\"\"\n", "canonical_solution": "    return a + b\n",
      "entry_point": "add", "test": "", "base_input": [[1, 2], [0, 0]], "plus_input": [[-1, 1], [0.5, 0.25]],
      "atol": 0}
open(d + "/he.jsonl", "w").write(json.dumps(he) + "\n")
comp = ["    return a + b\n", "    return abs(a) + b\n", "    return a - b\n"]
open(d + "/he-s.jsonl", "w").write("".join(json.dumps({"task_id": "HumanEval/0", "completion": c}) + "\n" for c in comp))
# a second problem, for two workers at once: many samples, all right
he2 = dict(he, task_id="HumanEval/1", prompt="def mul(a, b):\n    \"\"\"Product.\"\"\"\n",
           canonical_solution="    return a * b\n", entry_point="mul")
open(d + "/he2.jsonl", "w").write(json.dumps(he2) + "\n")
open(d + "/he2-s.jsonl", "w").write("".join(
    json.dumps({"task_id": "HumanEval/1", "completion": "    return a * b\n"}) + "\n" for _ in range(12)))
with open(d + "/bash.jsonl", "w") as f:
    for name in ("correct", "wrong"):
        f.write(json.dumps({"id": "bash-" + name, "language": "bash", "code": bash[name], "tests": bash["tests"]}) + "\n")
PY
"$P" import humaneval+ "$SQ_TMP/he.jsonl" --completions "$SQ_TMP/he-s.jsonl" >"$SQ_TMP/tasks.jsonl" ||
  sq_fail "import humaneval+"
cat "$SQ_TMP/bash.jsonl" >>"$SQ_TMP/tasks.jsonl"
"$P" import humaneval+ "$SQ_TMP/he2.jsonl" --completions "$SQ_TMP/he2-s.jsonl" >"$SQ_TMP/tasks2.jsonl" ||
  sq_fail "import humaneval+ (second problem)"

sq_start_redis
unset SANDQ_LLM_BASE_URL SANDQ_LLM_MODEL
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
KEYS="sq:{default}:cache:expected:*"
keys() { sq_redis_cli --scan --pattern "$KEYS" | sort; }

# serve NAME: a worker (id NAME) started and ready
serve() {
  sq_bg "$1" "$W" serve --worker-id "$1"
  sq_wait_for "grep -q 'ready in' $SQ_TMP/$1.log" 60 || { cat "$SQ_TMP/$1.log" >&2; sq_fail "$1 never got ready"; }
}
# stop NAME: its worker ends (SIGTERM, waited for)
stop() {
  eval "pid=\$SQ_PID_$1"
  kill -TERM "$pid" && wait "$pid" 2>/dev/null
}
# run BATCH FILE: the tasks of FILE pushed into BATCH, their results in $SQ_TMP/BATCH.results
run() {
  "$P" push --batch "$1" --wait --timeout-s 600 "$2" >"$SQ_TMP/$1.push" 2>&1 ||
    grep -q "finished" "$SQ_TMP/$1.push" || sq_fail "push $1: $(tail -5 "$SQ_TMP/$1.push")"
  "$P" results "$1" --format jsonl >"$SQ_TMP/$1.results" || sq_fail "results $1"
}
# check BATCH [forged]: the statuses of the first problem's tasks (forged:
# under the forged plus-tier values planted below)
check() {
  $PY - "$SQ_TMP/$1.results" "${2:-}" <<'PY' || sq_fail "the results of $1 are wrong"
import json, sys
r = {x["_id"]: x for x in map(json.loads, open(sys.argv[1]))}
got = {k: (x["tiers"]["base"], x["tiers"]["plus"]) if x.get("tiers") else x["status"] for k, x in r.items()}
want = {"HumanEval/0/0": ("passed", "passed"), "HumanEval/0/1": ("passed", "failed"),
        "HumanEval/0/2": ("failed", "failed"), "bash-correct": "passed", "bash-wrong": "failed"}
if sys.argv[2]:  # the plus tier's first value forged: add(-1, 1) "is" 7
    want.update({"HumanEval/0/0": ("passed", "failed")})
assert got == want, got
if sys.argv[2]:
    assert "(plus input 1 of 2)" in r["HumanEval/0/0"]["reason"], r["HumanEval/0/0"]["reason"]
assert not any(x["status"] == "invalid_task" for x in r.values()), r
PY
}
# count NAME TEXT: how many log lines of worker NAME hold TEXT
count() { grep -c "$2" "$SQ_TMP/$1.log"; }

# 1. The first worker runs each reference once (two tiers, one calls
# problem) and stores the three values, with a TTL of 7 days.
serve ex1
run b1 "$SQ_TMP/tasks.jsonl"
check b1
[ "$(count ex1 'expected values: running the reference')" = 3 ] ||
  sq_fail "ex1 ran the references $(count ex1 'expected values: running the reference') times, 3 expected"
[ "$(count ex1 'expected values: stored in Redis')" = 3 ] || sq_fail "ex1 stored: $(grep 'expected values' "$SQ_TMP/ex1.log")"
[ "$(keys | wc -l)" = 3 ] || sq_fail "keys in Redis: $(keys)"
for k in $(keys); do
  ttl=$(sq_redis_cli TTL "$k")
  [ "$ttl" -gt 600000 ] && [ "$ttl" -le 604800 ] || sq_fail "$k: TTL $ttl, 7 days expected"
  sq_redis_cli GET "$k" >"$SQ_TMP/v1-$(echo "$k" | sed 's/.*://')"
done
stop ex1

# 2. A second worker: every value from Redis, no reference run, the same results.
serve ex2
run b2 "$SQ_TMP/tasks.jsonl"
check b2
[ "$(count ex2 'expected values: from Redis')" = 3 ] || sq_fail "ex2: $(grep 'expected values' "$SQ_TMP/ex2.log")"
[ "$(count ex2 'expected values: running the reference')" = 0 ] || sq_fail "ex2 ran a reference: $(grep 'expected values' "$SQ_TMP/ex2.log")"
stop ex2

# 3. Damaged entries are ignored: each reference runs again, the tasks
# are judged right, and the entries are replaced by well-formed values.
# The plus tier's gets a byte that is not UTF-8 (it would break the tests'
# source), the base tier's a list not of values, the calls problem's
# records cut in half.
for k in $(keys); do
  v=$(sq_redis_cli GET "$k")
  case $v in
  *'"float"'*) v=$(printf '[[["str", "\377"], 0.0], [["int", "0x0"], 0.0]]') ;;
  '['*) v='[["int", 5]]' ;;
  *) v=$(printf %s "$v" | head -c $((${#v} / 2))) ;;
  esac
  sq_redis_cli SET "$k" "$v" EX 600 >/dev/null
done
serve ex3
run b3 "$SQ_TMP/tasks.jsonl"
check b3
[ "$(count ex3 'is damaged: ignored, the reference runs')" = 3 ] || sq_fail "ex3: $(grep 'expected values' "$SQ_TMP/ex3.log")"
[ "$(count ex3 'expected values: running the reference')" = 3 ] || sq_fail "ex3: $(grep 'expected values' "$SQ_TMP/ex3.log")"
[ "$(count ex3 'replaced the damaged entry in Redis')" = 3 ] || sq_fail "ex3: $(grep 'expected values' "$SQ_TMP/ex3.log")"
[ "$(count ex3 'expected values: from Redis')" = 0 ] || sq_fail "ex3 took a damaged entry: $(grep 'expected values' "$SQ_TMP/ex3.log")"
for k in $(keys); do
  ttl=$(sq_redis_cli TTL "$k")
  [ "$ttl" -gt 600000 ] || sq_fail "$k: TTL $ttl after the replacement, 7 days expected"
  # the same values as the first worker's (the CPU times aside)
  sq_redis_cli GET "$k" >"$SQ_TMP/v3"
  $PY - "$SQ_TMP/v1-$(echo "$k" | sed 's/.*://')" "$SQ_TMP/v3" <<'PY' || sq_fail "$k: the replaced value differs"
import json, sys
a, b = (open(p).read().strip() for p in sys.argv[1:3])
if a.startswith("["):
    a, b = ([e for e, _ in json.loads(x)] for x in (a, b))
assert a == b, (a, b)
PY
done
stop ex3

# 4. A forged entry of the right form is used as it is: whoever can write
# to Redis can write results too (docs/security.md). The plus tier's
# first value becomes 7: the right completion now fails there, which
# also shows that the judged values are Redis's and not recomputed.
plus_key=
for k in $(keys); do
  sq_redis_cli GET "$k" | grep -q '"float"' && plus_key=$k # add(0.5, 0.25): the plus tier's values
done
[ -n "$plus_key" ] || sq_fail "no entry holds the plus tier's values: $(for k in $(keys); do sq_redis_cli GET "$k"; done)"
v=$(sq_redis_cli GET "$plus_key" | sed 's/"0x0"/"0x7"/')
sq_redis_cli SET "$plus_key" "$v" EX 600 >/dev/null
serve ex4
run b4 "$SQ_TMP/tasks.jsonl"
check b4 forged
[ "$(count ex4 'expected values: running the reference')" = 0 ] || sq_fail "ex4: $(grep 'expected values' "$SQ_TMP/ex4.log")"

# 5. Two workers at once on a new problem: whatever the order of their
# reference runs, each tier's values are stored once (SET NX), and every
# worker judges with the stored ones.
serve ex5
run b5 "$SQ_TMP/tasks2.jsonl"
$PY - "$SQ_TMP/b5.results" <<'PY' || sq_fail "the results of b5 are wrong"
import json, sys
r = list(map(json.loads, open(sys.argv[1])))
assert len(r) == 12 and all(x["status"] == "passed" for x in r), [(x["_id"], x["status"], x.get("reason")) for x in r]
print("expected_shared: 12 samples judged by %d worker(s)" % len({x["worker"] for x in r}))
PY
stored=$(( $(count ex4 'expected values: stored in Redis') + $(count ex5 'expected values: stored in Redis') ))
first=$(( $(count ex4 'another worker stored them first') + $(count ex5 'another worker stored them first') ))
fetched=$(( $(grep -h 'expected values: from Redis' "$SQ_TMP/ex4.log" "$SQ_TMP/ex5.log" | grep -c 'HumanEval/1/') ))
[ "$stored" = 2 ] || sq_fail "the second problem's values were stored $stored times (2 tiers): $(grep -h 'expected values' "$SQ_TMP/ex4.log" "$SQ_TMP/ex5.log")"
[ "$(keys | wc -l)" = 5 ] || sq_fail "keys in Redis: $(keys)"
echo "expected_shared: second problem: stored 2, read back another worker's $first, from Redis $fetched"
echo "expected_shared: all checks passed"
