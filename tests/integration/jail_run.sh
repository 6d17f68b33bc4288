#!/bin/sh
# jail_run.sh: `sandq-worker run` on HumanEval-style files: a function, tests
# defining check(candidate) and an entry point. Checks the JSON it prints,
# a failing implementation, a runaway one, and the usage errors.
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
PY=/usr/bin/python3
[ -x $PY ] || sq_skip "$PY is not installed"
[ "$(id -u)" -eq 0 ] || sq_skip "needs root (run's default warm mode needs pid and mount namespaces)"
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
unset SANDQ_LLM_BASE_URL SANDQ_LLM_MODEL
W="$SQ_BIN/sandq-worker"

cat >"$SQ_TMP/good.py" <<'PY'
def add(a, b):
    """Returns the sum."""
    print("adding", a, b)
    return a + b
PY
cat >"$SQ_TMP/bad.py" <<'PY'
def add(a, b):
    return a - b
PY
cat >"$SQ_TMP/slow.py" <<'PY'
def add(a, b):
    while True:
        pass
PY
cat >"$SQ_TMP/tests.py" <<'PY'
def check(candidate):
    assert candidate(2, 3) == 5
    assert candidate(-1, 1) == 0
PY

# field FILE KEY: prints one field of the JSON object in FILE.
field() { $PY -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(json.dumps(v) if isinstance(v,bool) else v)' "$1" "$2"; }

"$W" run --tests "$SQ_TMP/tests.py" --entry-point add "$SQ_TMP/good.py" >"$SQ_TMP/good.json" 2>"$SQ_TMP/good.err" \
  || { cat "$SQ_TMP/good.err" >&2; sq_fail "run of good.py exited $?"; }
[ "$(wc -l <"$SQ_TMP/good.json")" -eq 1 ] || sq_fail "expected one JSON line, got: $(cat "$SQ_TMP/good.json")"
$PY -c 'import json,sys
o = json.load(open(sys.argv[1]))
want = {"status", "end", "exit_code", "signal", "stdout", "stderr", "stdout_truncated",
        "stderr_truncated", "wall_ms", "cpu_ms", "memory_kib"}
missing = want - set(o)
assert not missing, "missing fields: %s" % missing
assert o["status"] == "passed", o
assert o["end"] == "exited_ok" and o["exit_code"] == 0 and o["signal"] == 0, o
assert o["stdout"] == "adding 2 3\nadding -1 1\n", o
assert o["stdout_truncated"] is False and o["stderr_truncated"] is False, o
assert o["memory_kib"] > 0 and o["wall_ms"] >= 0, o
' "$SQ_TMP/good.json" || sq_fail "good.py: unexpected JSON: $(cat "$SQ_TMP/good.json")"

"$W" run --tests="$SQ_TMP/tests.py" --entry-point=add "$SQ_TMP/bad.py" >"$SQ_TMP/bad.json" \
  || sq_fail "run of bad.py exited $? (a failed verdict is still exit 0)"
[ "$(field "$SQ_TMP/bad.json" status)" = failed ] || sq_fail "bad.py: $(cat "$SQ_TMP/bad.json")"
[ "$(field "$SQ_TMP/bad.json" end)" = assertion ] || sq_fail "bad.py: $(cat "$SQ_TMP/bad.json")"
field "$SQ_TMP/bad.json" stderr | grep -q "AssertionError" || sq_fail "bad.py: no traceback in stderr"

# Without tests a clean run is "ok"; limits come from the flags.
"$W" run --wall-ms 700 --cpu-ms 30000 --tests "$SQ_TMP/tests.py" --entry-point add "$SQ_TMP/slow.py" \
  >"$SQ_TMP/slow.json" || sq_fail "run of slow.py exited $?"
[ "$(field "$SQ_TMP/slow.json" status)" = timeout ] || sq_fail "slow.py: $(cat "$SQ_TMP/slow.json")"
"$W" run "$SQ_TMP/good.py" >"$SQ_TMP/plain.json" || sq_fail "plain run exited $?"
[ "$(field "$SQ_TMP/plain.json" status)" = ok ] || sq_fail "plain: $(cat "$SQ_TMP/plain.json")"

# Bytes that are not UTF-8 still give valid JSON.
printf 'import os\nos.write(1, b"\\xff\\x00ok")\n' >"$SQ_TMP/bytes.py"
"$W" run "$SQ_TMP/bytes.py" >"$SQ_TMP/bytes.json" || sq_fail "bytes run exited $?"
[ "$(field "$SQ_TMP/bytes.json" stdout)" = "$(printf '\357\277\275\357\277\275ok')" ] \
  || sq_fail "bytes: $(cat "$SQ_TMP/bytes.json")"

# Warm mode gives the same verdicts and records its mode and layers.
"$W" run --mode warm --tests "$SQ_TMP/tests.py" --entry-point add "$SQ_TMP/good.py" >"$SQ_TMP/warm.json" \
  || sq_fail "warm run exited $?"
$PY -c 'import json,sys
o = json.load(open(sys.argv[1]))
assert o["status"] == "passed" and o["mode"] == "warm", o
assert "seccomp" in o["layers"] and "rlimits" in o["layers"], o
' "$SQ_TMP/warm.json" || sq_fail "warm: $(cat "$SQ_TMP/warm.json")"
[ "$(field "$SQ_TMP/good.json" mode)" = warm ] || sq_fail "the default (warm) run does not say so: $(cat "$SQ_TMP/good.json")"
"$W" run --mode spawn --tests "$SQ_TMP/tests.py" --entry-point add "$SQ_TMP/good.py" >"$SQ_TMP/spawn.json" \
  || sq_fail "spawn run exited $?"
[ "$(field "$SQ_TMP/spawn.json" status)" = passed ] && [ "$(field "$SQ_TMP/spawn.json" mode)" = spawn ] \
  || sq_fail "spawn run: $(cat "$SQ_TMP/spawn.json")"
printf 'import ctypes\nctypes.CDLL(None).ptrace(0, 0, 0, 0)\n' >"$SQ_TMP/ptrace.py"
for mode in spawn warm; do
  "$W" run --mode $mode "$SQ_TMP/ptrace.py" >"$SQ_TMP/ptrace.json" || sq_fail "ptrace run exited $?"
  [ "$(field "$SQ_TMP/ptrace.json" status)" = policy_violation ] || sq_fail "ptrace ($mode): $(cat "$SQ_TMP/ptrace.json")"
  [ "$(field "$SQ_TMP/ptrace.json" blocked_syscall)" = ptrace ] || sq_fail "ptrace ($mode): $(cat "$SQ_TMP/ptrace.json")"
done

# `check`: one line per layer; as root every layer is enforced.
"$W" check >"$SQ_TMP/check.out" 2>&1 || sq_fail "check exited $?: $(cat "$SQ_TMP/check.out")"
for layer in pid_ns net_ns mount_ns new_root uid caps no_new_privs rlimits seccomp run_spawn run_warm; do
  grep -q "^ok  *$layer " "$SQ_TMP/check.out" || sq_fail "check: no ok line for $layer: $(cat "$SQ_TMP/check.out")"
done

# Usage errors: exit 2 and a message naming the flag.
usage() {
  flag=$1; shift
  "$W" run "$@" >"$SQ_TMP/usage.out" 2>"$SQ_TMP/usage.err"
  rc=$?
  [ $rc -eq 2 ] || sq_fail "run $*: exit $rc, want 2"
  grep -q -- "$flag" "$SQ_TMP/usage.err" || sq_fail "run $*: message does not name $flag: $(cat "$SQ_TMP/usage.err")"
  [ ! -s "$SQ_TMP/usage.out" ] || sq_fail "run $*: printed to stdout on a usage error"
}
usage --wall-ms --wall-ms -5 "$SQ_TMP/good.py"
usage --cpu-ms --cpu-ms=abc "$SQ_TMP/good.py"
usage --memory-mib --memory-mib 12x "$SQ_TMP/good.py"
usage --output-kib --output-kib "$SQ_TMP/good.py"
usage --entry-point --entry-point "add(); import os" "$SQ_TMP/good.py"
usage --bogus --bogus 1 "$SQ_TMP/good.py"
usage --mode --mode fast "$SQ_TMP/good.py"
usage FILE.py --wall-ms 100
usage nonexistent.py "$SQ_TMP/nonexistent.py"
echo "jail_run: ok"
