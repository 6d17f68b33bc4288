#!/bin/sh
# evaluate.sh: `sandq-producer evaluate`, one command from a dataset to a
# report, and the honest scores of `report`.
#   1. Without SANDQ_REDIS_URL it starts its own redis-server and workers:
#      HumanEval's reference solutions give pass@1 1.0 (a float in JSON),
#      and every process it started (seen by pid and start time while it
#      ran, and by a mark in their environment) is gone when it returns.
#   2. Completions with known right and wrong samples: pass@k equals the
#      unbiased estimator computed here with exact rationals, to 1e-12.
#   3. SIGINT mid-run (programs sleeping in the jail): exit 130, nothing
#      left behind.
#   4. Samples that never reached a model (no LLM: llm_error): evaluate and
#      `report` exit 3 and say why (the reason whole, never cut mid-word),
#      pass@k is null, --allow-missing accepts it, `report A B` refuses.
#   5. A stored result that is not BSON: `report` names it and exits 6 (as
#      `results` does), and scores only the readable ones.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
data=${SANDQ_HUMANEVAL:-${SANDQ_DATA_DIR:+$SANDQ_DATA_DIR/HumanEval.jsonl.gz}}
[ -n "$data" ] && [ -r "$data" ] || sq_skip "HumanEval data not found (SANDQ_DATA_DIR or SANDQ_HUMANEVAL)"
command -v redis-server >/dev/null || sq_skip "redis-server is not installed (scripts/install-deps.sh)"
sq_env_init
sq_need_worker_host
unset SANDQ_REDIS_URL SANDQ_LLM_BASE_URL SANDQ_LLM_MODEL
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"

# alive PID START: the process PID started at START (field 22 of its stat)
# is there and not a zombie.
alive() {
  st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$(echo "$st" | cut -d' ' -f1)" != Z ] && [ "$(echo "$st" | cut -d' ' -f20)" = "$2" ]
}
# watch PID OUT: until PID exits, records every process of its tree as
# "pid start" lines in OUT (sorted, unique).
watch_tree() {
  : >"$2"
  while kill -0 "$1" 2>/dev/null; do
    for p in $(sq_tree_pids "$1"); do
      s=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f20) && [ -n "$s" ] && echo "$p $s" >>"$2"
    done
    sleep 0.2
  done
  sort -u -o "$2" "$2"
}
# gone LIST MARK WHAT: no process of LIST is alive, and none carries MARK in
# its environment (waits for the kernel to finish a reaping: 10 s).
gone() {
  left=""
  i=0
  while [ $i -lt 100 ]; do
    left=""
    while read -r p s; do alive "$p" "$s" && left="$left $p"; done <"$1"
    for e in /proc/[0-9]*/environ; do
      { tr '\0' '\n' <"$e"; } 2>/dev/null | grep -qx "SQ_EVAL_MARK=$2" && left="$left ${e#/proc/}"
    done
    [ -z "$left" ] && return 0
    i=$((i + 1))
    sleep 0.1
  done
  ps -o pid,pgid,stat,args -p "$(echo $left | tr ' ' ',' | sed 's|/environ||g')" >&2 || true
  sq_fail "$3: processes left behind:$left"
}
# run_eval NAME MARK ARGS...: evaluate in the background with MARK in its
# environment, its tree watched; sets EV_PID. ev_end NAME [MIN] waits, sets
# EV_RC and, given MIN, wants the watcher to have seen MIN processes (only
# for a run held long enough for it to look: a quick run may end between
# two of its looks on a loaded machine; the mark in the environment is
# checked whatever the watcher saw).
run_eval() {
  name=$1 mark=$2; shift 2
  SQ_EVAL_MARK=$mark "$P" evaluate "$@" >"$SQ_TMP/$name.out" 2>"$SQ_TMP/$name.err" &
  EV_PID=$!
  watch_tree "$EV_PID" "$SQ_TMP/$name.tree" &
  EV_WATCH=$!
}
ev_end() {
  set +e
  wait "$EV_PID"
  EV_RC=$?
  wait "$EV_WATCH"
  set -e
  [ -z "${2:-}" ] || [ "$(grep -c . "$SQ_TMP/$1.tree")" -ge "$2" ] || sq_fail "$1: too few processes seen ($(cat "$SQ_TMP/$1.tree"))"
}

# 1. The reference solutions, on a private fleet of two workers.
run_eval canon "mark-canon-$$" humaneval "$data" --canonical --k 1 --json --workers 2
ev_end canon
[ "$EV_RC" -eq 0 ] || { cat "$SQ_TMP/canon.err" >&2; sq_fail "evaluate --canonical exited $EV_RC"; }
gone "$SQ_TMP/canon.tree" "mark-canon-$$" "evaluate --canonical"
grep -q "a private redis-server at redis://127.0.0.1:" "$SQ_TMP/canon.err" || sq_fail "no word of the private Redis"
$PY - "$SQ_TMP/canon.out" <<'PY' || sq_fail "evaluate --canonical: pass@1 is not 1.0"
import json, re, sys
text = open(sys.argv[1]).read()
r = json.loads(text)
assert r["tasks"] == 164 and r["pass_at_k"] == {"1": 1.0} and r["verdicts"] == 164, r["pass_at_k"]
assert r["no_verdict"]["count"] == 0
assert re.search(r'"pass_at_k":\s*\{\s*"1":\s*1\.0\s*\}', text), "pass@1 not written as a float"
PY
echo "evaluate: HumanEval's reference solutions pass@1 1.0 on a private fleet; nothing left running"

# 1b. README's quick start, as written, from a clone (build/bin) beside ../shared/data.
cmd=$(grep -m1 '^build/bin/sandq-producer evaluate ' "$SQ_SRC/README.md") || sq_fail "README shows no evaluate command"
mkdir -p "$SQ_TMP/r/clone/build" "$SQ_TMP/r/shared/data"
ln -s "$SQ_BIN" "$SQ_TMP/r/clone/build/bin"
ln -s "$data" "$SQ_TMP/r/shared/data/HumanEval.jsonl.gz"
(cd "$SQ_TMP/r/clone" && eval "$cmd") >"$SQ_TMP/readme.out" 2>"$SQ_TMP/readme.err" ||
  { cat "$SQ_TMP/readme.err" >&2; sq_fail "README's '$cmd' failed"; }
grep -q "pass@1       1.0000  (164 problem(s))" "$SQ_TMP/readme.out" || { cat "$SQ_TMP/readme.out" >&2; sq_fail "README's evaluate: pass@1 is not 1"; }

# 2. Known right and wrong completions: problem i of the first 12 has
#    (i mod 4) right of 3 + (i mod 3) samples.
$PY - "$data" "$SQ_TMP/samples.jsonl" "$SQ_TMP/expected.json" <<'PY'
import gzip, json, sys
from fractions import Fraction
from math import comb
probs = [json.loads(l) for l in gzip.open(sys.argv[1], "rt")][:12]
exp, counts = {}, {}
with open(sys.argv[2], "w") as f:
    for i, p in enumerate(probs):
        n, c = 3 + i % 3, min(i % 4, 3 + i % 3)
        for s in range(n):
            body = p["canonical_solution"] if s < c else "    return None\n"
            f.write(json.dumps({"task_id": p["task_id"], "completion": body}) + "\n")
        counts[p["task_id"]] = (n, c)
for k in (1, 2, 3, 5):
    vals = [1 - Fraction(comb(n - c, k), comb(n, k)) for n, c in counts.values() if n >= k]
    exp[str(k)] = float(sum(vals) / len(vals)) if vals else None
json.dump({"pass_at_k": exp, "counts": counts}, open(sys.argv[3], "w"))
PY
run_eval known "mark-known-$$" humaneval "$data" --completions "$SQ_TMP/samples.jsonl" --k 1,2,3,5 --json
ev_end known
[ "$EV_RC" -eq 0 ] || { cat "$SQ_TMP/known.err" >&2; sq_fail "evaluate --completions exited $EV_RC"; }
gone "$SQ_TMP/known.tree" "mark-known-$$" "evaluate --completions"
grep -q "48 task(s) from 12 humaneval problem(s); 152 of the dataset's 164 problems have no sample" "$SQ_TMP/known.err" ||
  { cat "$SQ_TMP/known.err" >&2; sq_fail "the import message does not count the problems with samples"; }
$PY - "$SQ_TMP/known.out" "$SQ_TMP/expected.json" <<'PY' || sq_fail "evaluate --completions: pass@k differs"
import json, sys
r, e = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
per = {p["task_id"]: (p["n"], p["c"]) for p in r["per_problem"]}
assert per == {k: tuple(v) for k, v in e["counts"].items()}, per
for k, want in e["pass_at_k"].items():
    got = r["pass_at_k"][k]
    assert (got is None) == (want is None) and (want is None or abs(got - want) <= 1e-12), (k, got, want)
print("evaluate: pass@k %s as the exact estimator gives" % r["pass_at_k"])
PY

# 3. Ctrl-C mid-run: programs asleep in the jail, then SIGINT.
$PY - "$data" "$SQ_TMP/sleepy.jsonl" <<'PY'
import gzip, json, sys
p = json.loads(gzip.open(sys.argv[1], "rt").readline())
with open(sys.argv[2], "w") as f:
    for s in range(12):
        f.write(json.dumps({"task_id": p["task_id"], "completion": "    import time\n    time.sleep(120)\n"}) + "\n")
PY
run_eval int "mark-int-$$" humaneval "$data" --completions "$SQ_TMP/sleepy.jsonl" --wall-ms 200000 --workers 2
i=0
until sq_tree_asleep "$EV_PID"; do
  kill -0 "$EV_PID" 2>/dev/null || { cat "$SQ_TMP/int.err" >&2; sq_fail "evaluate ended before its programs ran"; }
  i=$((i + 1)); [ $i -lt 1200 ] || sq_fail "no program of the run was seen running"
  sleep 0.1
done
# the watcher has looked at the whole tree (its file grows as it looks)
until [ "$(sort -u "$SQ_TMP/int.tree" | grep -c .)" -ge 4 ]; do
  i=$((i + 1)); [ $i -lt 1200 ] || sq_fail "the watcher saw too few processes ($(cat "$SQ_TMP/int.tree"))"
  sleep 0.1
done
kill -INT "$EV_PID"
ev_end int 4
[ "$EV_RC" -eq 130 ] || { cat "$SQ_TMP/int.err" >&2; sq_fail "evaluate interrupted exited $EV_RC, want 130"; }
gone "$SQ_TMP/int.tree" "mark-int-$$" "evaluate interrupted"
grep -q "interrupted; stopping the private redis-server and workers" "$SQ_TMP/int.err" || sq_fail "no word of the stop"
echo "evaluate: SIGINT mid-run exits 130 and leaves $(grep -c . "$SQ_TMP/int.tree") processes none behind"

# 4. No model: every sample llm_error. First on a private fleet...
run_eval nollm "mark-nollm-$$" humaneval "$data" --samples 1 --k 1 --workers 1
ev_end nollm
[ "$EV_RC" -eq 3 ] || { cat "$SQ_TMP/nollm.err" >&2; sq_fail "evaluate without a model exited $EV_RC, want 3"; }
gone "$SQ_TMP/nollm.tree" "mark-nollm-$$" "evaluate without a model"
grep -q "164 of 164 samples of batch .* have no verdict: llm_error 164 — no model answered; set SANDQ_LLM_BASE_URL" \
  "$SQ_TMP/nollm.err" || { cat "$SQ_TMP/nollm.err" >&2; sq_fail "evaluate does not say why no sample has a verdict"; }
grep -q "164 of 164 samples have no verdict" "$SQ_TMP/nollm.out" && grep -Eq "pass@1 +- +\(no problem has 1 samples\)" "$SQ_TMP/nollm.out" ||
  { cat "$SQ_TMP/nollm.out" >&2; sq_fail "the report scores samples that never reached a model"; }
# ... then on a fleet (SANDQ_REDIS_URL), where `report` reads the batch again.
sq_start_redis
sq_bg w "$SQ_BIN/sandq-worker" serve --worker-id ev-fleet
"$P" evaluate humaneval "$data" --samples 1 --k 1 --batch nollm --json >"$SQ_TMP/fleet.json" 2>"$SQ_TMP/fleet.err" && rc=0 || rc=$?
[ $rc -eq 3 ] || { cat "$SQ_TMP/fleet.err" >&2; sq_fail "evaluate on a fleet without a model exited $rc, want 3"; }
grep -q "private" "$SQ_TMP/fleet.err" && sq_fail "evaluate started its own Redis although SANDQ_REDIS_URL was set"
$PY - "$SQ_TMP/fleet.json" <<'PY' || sq_fail "report --json of samples without a verdict"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["pass_at_k"] == {"1": None} and r["verdicts"] == 0 and r["no_verdict"]["count"] == 164, (r["pass_at_k"], r["no_verdict"]["count"])
g = r["no_verdict"]["groups"]
assert len(g) == 1 and g[0]["status"] == "llm_error" and g[0]["count"] == 164 and "SANDQ_LLM_BASE_URL" in g[0]["why"], g
assert r["failures"] == [] and all(p["n"] == 0 and p["missing"] == 1 for p in r["per_problem"])
PY
"$P" report nollm --k 1 >"$SQ_TMP/r.out" 2>"$SQ_TMP/r.err" && rc=0 || rc=$?
[ $rc -eq 3 ] || sq_fail "report of samples without a verdict exited $rc, want 3"
grep -q "164 of 164 samples of batch nollm have no verdict: llm_error 164" "$SQ_TMP/r.err" || { cat "$SQ_TMP/r.err" >&2; sq_fail "report does not say why"; }
# the reason whole, wrapped at spaces: no "..." cut, every word of it there
tr '\n' ' ' <"$SQ_TMP/r.out" | tr -s ' ' | grep -qF "no LLM provider is configured (set SANDQ_LLM_BASE_URL and SANDQ_LLM_MODEL, or providers in the config file)" ||
  { cat "$SQ_TMP/r.out" >&2; sq_fail "the reason is not shown whole"; }
grep -Eq '[^ ]\.\.\.$' "$SQ_TMP/r.out" && { cat "$SQ_TMP/r.out" >&2; sq_fail "a reason cut mid-word"; }
"$P" report nollm --k 1 --allow-missing >/dev/null 2>&1 || sq_fail "report --allow-missing exited non-zero"
"$P" report nollm --k 1 --html "$SQ_TMP/nollm.html" --allow-missing >/dev/null 2>&1 || sq_fail "report --html --allow-missing"
grep -q "Samples without a verdict" "$SQ_TMP/nollm.html" || sq_fail "the page does not set the samples apart"
"$P" evaluate humaneval "$data" --canonical --k 1 --batch canon >/dev/null 2>&1 || sq_fail "evaluate --canonical on the fleet"
"$P" report canon nollm --k 1 >/dev/null 2>"$SQ_TMP/cmp.err" && rc=0 || rc=$?
[ $rc -eq 3 ] && grep -q "refusing to compare" "$SQ_TMP/cmp.err" || { cat "$SQ_TMP/cmp.err" >&2; sq_fail "report A B compared samples without a verdict (exit $rc)"; }
echo "evaluate: samples without a verdict are set apart, exit 3 with the reason, --allow-missing accepts, report A B refuses"

# 5. An unreadable result beside two good ones.
"$P" import humaneval "$data" --canonical 2>/dev/null | head -n 2 >"$SQ_TMP/two.jsonl"
"$P" push --batch bad --wait "$SQ_TMP/two.jsonl" >/dev/null 2>&1 || sq_fail "the two-task batch"
sq_redis_cli HSET 'sq:{default}:results:bad' junk-1 'not bson' junk-2 'nor this' >/dev/null
for form in text json html; do
  case $form in text) set -- ;; json) set -- --json ;; html) set -- --html "$SQ_TMP/bad.html" ;; esac
  "$P" report bad --k 1 "$@" >"$SQ_TMP/bad.out" 2>"$SQ_TMP/bad.err" && rc=0 || rc=$?
  [ $rc -eq 6 ] || { cat "$SQ_TMP/bad.err" >&2; sq_fail "report ($form) of unreadable results exited $rc, want 6"; }
  grep -q "result 'junk-1' of batch bad is not a valid BSON document" "$SQ_TMP/bad.err" &&
    grep -q "result 'junk-2' of batch bad is not a valid BSON document" "$SQ_TMP/bad.err" ||
    { cat "$SQ_TMP/bad.err" >&2; sq_fail "report ($form) does not name the unreadable results"; }
done
"$P" report bad --k 1 --json 2>/dev/null | $PY -c 'import json, sys
r = json.load(sys.stdin)
assert r["pass_at_k"]["1"] == 1.0 and r["pass_at_k_problems"]["1"] == 2 and r["no_verdict"]["unreadable"] == 2, r["pass_at_k"]' ||
  sq_fail "unreadable results were scored"
echo "evaluate: report names unreadable results and exits 6, scoring the readable ones"
