#!/bin/sh
# reward_hacks.sh: a corpus of reward hacks against the test judge
# (tests/reward_hacks/NN-name.py) never scores `passed`: each runs through
# `sandq-worker run` in both jail modes, under the default pre-check policy
# and with every finding only recorded (all=record), so the judge alone must
# hold. Controls (honest solutions, `# expect: passed`) must pass, judged as
# their `# judge:` line says (isolated, or in_process for tests that pass
# the candidate a function of their own).
# A payload's header: `# tests: FILE [ENTRY]` (tests/reward_hacks/FILE, and
# the entry_point), `# expect: passed` for a control, `# judge: MODE`,
# `# limits: FLAGS` for `sandq-worker run`.
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
[ "$(id -u)" -eq 0 ] || sq_skip "the jail's namespaces need root"
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
mkdir -p "$SANDQ_SCRATCH_ROOT"
D="$SQ_SRC/tests/reward_hacks"
fails=0 hacks=0 controls=0
for f in "$D"/[0-9][0-9]-*.py; do
  name=$(basename "$f" .py)
  set -- $(sed -n 's/^# tests: //p' "$f")
  tests=$1 entry=${2:-}
  expect=$(sed -n 's/^# expect: //p' "$f")
  judge=$(sed -n 's/^# judge: //p' "$f")
  limits=$(sed -n 's/^# limits: //p' "$f")
  for mode in spawn warm; do
    for policy in default all=record; do
      pol=""
      [ "$policy" = default ] || pol="--policy $policy"
      # shellcheck disable=SC2086
      "$SQ_BIN/sandq-worker" run --mode "$mode" $pol $limits --tests "$D/$tests" \
        ${entry:+--entry-point "$entry"} "$f" >"$SQ_TMP/out.json" 2>"$SQ_TMP/err.txt"
      verdict=$(/usr/bin/python3 - "$SQ_TMP/out.json" "$expect" "$judge" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except ValueError:
    print("BAD no result")
    sys.exit()
want, judge = sys.argv[2], sys.argv[3]
st, how = r["status"], r.get("judge", "")
if want == "passed":
    ok = st == "passed" and (not judge or how == judge)
else:
    ok = st != "passed"
print(("ok" if ok else "BAD") + " %s judge=%s reason=%s" % (st, how or "-", (r.get("reason") or "")[:110]))
PY
)
      echo "$name $mode $policy: $verdict"
      case $verdict in ok*) ;; *) fails=$((fails + 1)); sed -n 1,5p "$SQ_TMP/err.txt" ;; esac
      if [ "$expect" = passed ]; then controls=$((controls + 1)); else hacks=$((hacks + 1)); fi
    done
  done
done
echo "reward hacks: $hacks runs of hacks, none may pass; $controls runs of controls, all must pass; $fails wrong"
[ "$fails" -eq 0 ] || sq_fail "$fails runs got the wrong verdict"
