#!/bin/sh
# verdict_integrity.sh: no shortcut passes. The public reference sets through the real pipeline: producer, real
# redis-server, two workers in each jail mode (default-deny seccomp,
# namespaces, the static pre-check under its default policy, the test
# harness). Every one of the 164 HumanEval canonical solutions and of the
# 974 MBPP reference solutions must get its reference verdict (passed; MBPP
# 367 and 927 raise NameError by the data's own convention, see
# ../shared/data/README.md): the jail's allowlist, the pre-check and the
# harness's checks are sized for real code. And a wrong solution must never
# pass: per HumanEval problem, one that returns None, and the shortcuts of
# the harness's known attacks (SystemExit before the tests, os._exit inside them, an exit hook
# forcing status 0, a result that compares equal to everything). MBPP is
# skipped (and said so) when its file is absent. (humaneval.sh and mbpp.sh
# run the same sets as a user would, through import and report.)
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
data=${SANDQ_HUMANEVAL:-${SANDQ_DATA_DIR:+$SANDQ_DATA_DIR/HumanEval.jsonl.gz}}
[ -n "$data" ] && [ -r "$data" ] || sq_skip "HumanEval data not found (SANDQ_DATA_DIR or SANDQ_HUMANEVAL)"
/usr/bin/python3 -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson module) is not installed"
sq_env_init
sq_start_redis
mbpp=${SANDQ_MBPP:-${SANDQ_DATA_DIR:+$SANDQ_DATA_DIR/mbpp.jsonl}}
[ -n "$mbpp" ] && [ -r "$mbpp" ] || { echo "note: MBPP data not found (SANDQ_DATA_DIR or SANDQ_MBPP): only HumanEval runs"; mbpp=""; }
/usr/bin/python3 - "$data" "$SQ_TMP/tasks.jsonl" "$mbpp" <<'PY'
import gzip, json, sys
EARLY = "exited before the tests completed"
EQUAL = "a value compared in the tests claims to equal anything"
# The isolated judge's reasons (common/judge/judge.py); "*": a prefix.
NOT_PLAIN = "returned a value the judge cannot compare: _AlwaysEqual"
GONE = "the candidate's process exited with status 0 during a call to *"
# A result that claims to equal (and to be ordered against) anything.
ALWAYS_EQUAL = """class _AlwaysEqual:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __lt__(self, other): return True
    def __le__(self, other): return True
    def __gt__(self, other): return True
    def __ge__(self, other): return True
    def __sub__(self, other): return self
    def __rsub__(self, other): return self
    def __abs__(self): return self
    def __hash__(self): return 0
"""
n = 0
with gzip.open(sys.argv[1], "rt") as f, open(sys.argv[2], "w") as out:
    def put(**t):
        global n
        n += 1
        out.write(json.dumps(t) + "\n")
    for line in f:
        p = json.loads(line)
        base = {"tests": p["test"], "entry_point": p["entry_point"], "limits": {"wall_ms": 60000, "cpu_ms": 30000}}
        tid, prompt = p["task_id"], p["prompt"]
        put(**base, id=tid, code=prompt + p["canonical_solution"], metadata={"expect": "passed"})
        # A wrong solution: the function returns None. Checks assert on it
        # (failed) or trip over it (a TypeError: runtime_error); never passed.
        put(**base, id=tid + "/wrong", metadata={"expect": ["failed", "runtime_error"]}, code=prompt + "    return None\n")
        # The shortcuts: each exits 0 with a wrong solution, or compares equal.
        put(**base, id=tid + "/exit", metadata={"expect": "failed", "reason": EARLY},
            code=prompt + "    return None\nraise SystemExit(0)\n")
        put(**base, id=tid + "/os_exit", metadata={"expect": "failed", "reason": [EARLY, GONE]},
            code="import os\n" + prompt + "    os._exit(0)\n")
        # (warm mode runs no exit hooks: there the tests' own error stands)
        put(**base, id=tid + "/exit_hook", metadata={"expect": ["failed", "runtime_error"], "reason": [EARLY, None]},
            code="import atexit, os\natexit.register(os._exit, 0)\n" + prompt + "    return None\n")
        put(**base, id=tid + "/equal", metadata={"expect": ["failed", "runtime_error"],
                                                 "reason": [EQUAL, NOT_PLAIN, None]},
            code=ALWAYS_EQUAL + prompt + "    return _AlwaysEqual()\n")
    if sys.argv[3]:
        for line in open(sys.argv[3]):
            p = json.loads(line)
            setup = p["test_setup_code"]
            code = (setup + "\n" if setup.strip() else "") + p["code"]
            # 367 and 927: the setup builds a Node before the code defines it.
            want = "runtime_error" if p["task_id"] in (367, 927) else "passed"
            put(id="mbpp/%d" % p["task_id"], code=code, tests="\n".join(p["test_list"]),
                limits={"wall_ms": 60000, "cpu_ms": 30000}, metadata={"expect": want})
print(n, file=open(sys.argv[2] + ".count", "w"))
PY
for mode in warm spawn; do
  export SANDQ_JAIL_MODE=$mode SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch-$mode"
  sq_bg "w1$mode" "$SQ_BIN/sandq-worker" serve --worker-id "he-1-$mode"
  sq_bg "w2$mode" "$SQ_BIN/sandq-worker" serve --worker-id "he-2-$mode"
  set +e
  sq_push_wait "he-$mode" "$SQ_TMP/push-$mode.out" --out "$SQ_TMP/$mode.bson" "$SQ_TMP/tasks.jsonl"
  rc=$?
  set -e
  /usr/bin/python3 - "$SQ_TMP/$mode.bson" "$mode" "$(cat "$SQ_TMP/tasks.jsonl.count")" <<'PY'
import sys, bson
docs = bson.decode_all(open(sys.argv[1], "rb").read())
total = int(sys.argv[3])
def expected(d):
    m = d["metadata"]
    e, r = m["expect"], m.get("reason", "any")
    if d["status"] not in (e if isinstance(e, list) else [e]):
        return False
    # None in a list: the run's own reason (reason.c: the assertion, the
    # exception) stands, whatever it says, as long as it is not empty.
    rs = r if isinstance(r, list) else [r]
    if r == "any" or d.get("reason") in rs:
        return True
    if any(x and x.endswith("*") and (d.get("reason") or "").startswith(x[:-1]) for x in rs):
        return True
    return None in rs and bool(d.get("reason"))
bad = [(d["_id"], d["status"], d.get("reason"), d["stderr"][-300:]) for d in docs if not expected(d)]
modes = {d["jail"]["mode"] for d in docs}
assert modes == {sys.argv[2]}, modes
passed = [d["_id"] for d in docs if d["status"] == "passed" and not d["metadata"]["expect"] == "passed"]
wrong_failed = sum(1 for d in docs if d["_id"].endswith("/wrong") and d["status"] == "failed")
for b in bad[:10]:
    print("MISMATCH", *b)
if bad:
    import collections
    print("mismatches by kind:", collections.Counter(b[0].split("/")[-1] if "/" in b[0][10:] else b[0][:5] for b in bad))
assert len(docs) == total, (len(docs), total)
assert not passed, "wrong solutions passed: %s" % passed[:10]
assert not bad, "%d of %d differ from their expectation (mode %s)" % (len(bad), total, sys.argv[2])
refs = sum(1 for d in docs if d["metadata"]["expect"] in ("passed",) or d["_id"] in ("mbpp/367", "mbpp/927"))
# How the judge ran the reference solutions: isolated but for the few whose
# tests need the candidate's own objects (docs/security.md lists them).
judges = {}
for d in docs:
    if d["metadata"]["expect"] == "passed":
        judges.setdefault(d.get("judge", "none"), []).append(d["_id"])
print("judge (%s): %s; in_process: %s" % (sys.argv[2], {k: len(v) for k, v in judges.items()},
      judges.get("in_process", [])))
assert set(judges) <= {"isolated", "in_process"}, judges.keys()
assert len(judges.get("in_process", [])) <= 6, judges["in_process"]
print("reference sets (%s): %d reference solutions got their verdicts (HumanEval and, when present, MBPP); "
      "of 164 wrong HumanEval ones, %d failed an assertion, the rest raised; every early exit and "
      "always-equal result failed" % (sys.argv[2], refs, wrong_failed))
PY
  [ $rc -eq 0 ] || { cat "$SQ_TMP/push-$mode.out"; sq_fail "producer exited $rc in mode $mode"; }
  # Stop this pair (SIGTERM: finish and leave) so the next mode's workers do all of its work.
  eval "p1=\$SQ_PID_w1$mode p2=\$SQ_PID_w2$mode"
  kill -TERM "$p1" "$p2"
  wait "$p1" "$p2" || sq_fail "a $mode worker did not stop cleanly on SIGTERM"
done
