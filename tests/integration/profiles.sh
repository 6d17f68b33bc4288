#!/bin/sh
# profiles.sh: interpreter profiles (docs/configuration.md, "Profiles"),
# through `sandq-worker run` in both jail modes and a real `serve`:
#   1. the default profile cannot import pandas, not even with Debian's
#      dist-packages appended to sys.path (hidden in its root)
#   2. the built-in data profile imports numpy and pandas, in spawn and warm
#   3. a custom profile from a venv (python3 -m venv --system-site-packages)
#      with a module of its own, preloaded: importable there, nowhere else
#   4. a profile's own limits: its max_limits clamp a task's, its
#      default_limits fill what a task leaves out
#   5. a broken profile (a missing package path, a module that does not
#      import) fails the worker's start with exit 2 and the reason
#   6. hostile programs in the data profile are contained: ctypes through
#      numpy, numpy.ctypeslib, pandas' readers at host files and a URL,
#      matplotlib writing outside the scratch
#   7. serve: tasks naming "data" pass warm, with "profile" in the result
#      and the audit trail; an unknown profile is invalid_task naming the
#      worker's profiles
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
PY=/usr/bin/python3
[ -x $PY ] || sq_skip "$PY is not installed"
[ "$(id -u)" -eq 0 ] || sq_skip "profiles' roots need root (mount namespaces)"
$PY -c 'import numpy, pandas' 2>/dev/null || sq_skip "python3-numpy and python3-pandas are not installed (scripts/install-deps.sh)"
$PY -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson) is not installed"
W="$SQ_BIN/sandq-worker"
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
unset SANDQ_LLM_BASE_URL SANDQ_LLM_MODEL

# field NAME < run's JSON
field() { $PY -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print(v if isinstance(v, str) else json.dumps(v))' "$1"; }

# run NAME MODE ARGS... FILE: the run's JSON in $SQ_TMP/NAME.json
run() {
  rn=$1; shift
  "$W" run --policy all=record "$@" >"$SQ_TMP/$rn.json" 2>"$SQ_TMP/$rn.err" ||
    { sq_fail_later "$rn: sandq-worker run exited $?: $(cat "$SQ_TMP/$rn.err")"; echo '{}' >"$SQ_TMP/$rn.json"; }
}
expect() { # NAME FIELD WANT
  got=$(field "$2" <"$SQ_TMP/$1.json")
  [ "$got" = "$3" ] || sq_fail_later "$1: $2 is '$got', want '$3' ($(head -c 600 "$SQ_TMP/$1.json"))"
}

cat >"$SQ_TMP/pandas.py" <<'EOF'
import pandas as pd, numpy as np
df = pd.DataFrame({"a": np.arange(4)})
print(int(df["a"].sum()))
EOF
cat >"$SQ_TMP/appended.py" <<'EOF'
import sys
sys.path.append('/usr/lib/python3/dist-packages')
import os
print(len(os.listdir('/usr/lib/python3/dist-packages')))
import numpy
EOF

# 1 and 2, in both modes.
for mode in spawn warm; do
  run default-$mode --mode $mode "$SQ_TMP/pandas.py"
  expect default-$mode status runtime_error
  grep -q "No module named 'pandas'" "$SQ_TMP/default-$mode.json" || sq_fail_later "default-$mode: no ModuleNotFoundError"
  run appended-$mode --mode $mode "$SQ_TMP/appended.py"
  expect appended-$mode stdout "0"
  grep -q "No module named 'numpy'" "$SQ_TMP/appended-$mode.json" || sq_fail_later "appended-$mode: numpy imported in the default profile"
  run data-$mode --mode $mode --profile data "$SQ_TMP/pandas.py"
  expect data-$mode status ok
  expect data-$mode stdout "6"
  expect data-$mode profile data
  expect data-$mode mode $mode
done
echo "1-2: default profile without pandas (dist-packages hidden), data profile with it, spawn and warm"

# 3. A venv with a module of its own.
$PY -m venv --system-site-packages "$SQ_TMP/venv" || sq_fail "python3 -m venv failed"
SITE=$(echo "$SQ_TMP"/venv/lib/python3*/site-packages)
[ -d "$SITE" ] || sq_fail "no site-packages in the venv: $SITE"
echo 'ANSWER = 42' >"$SITE/sqprobe.py"
cat >"$SQ_TMP/venv.json" <<JSON
{"profiles": {"venv": {"packages": ["$SITE"], "preload": ["sqprobe"],
                       "env": {"SQPROBE_MODE": "on"}}}}
JSON
printf 'import os, sqprobe\nprint(sqprobe.ANSWER, os.environ["SQPROBE_MODE"])\n' >"$SQ_TMP/probe.py"
for mode in spawn warm; do
  run venv-$mode --config "$SQ_TMP/venv.json" --mode $mode --profile venv "$SQ_TMP/probe.py"
  expect venv-$mode stdout "42 on"
  run venv-default-$mode --config "$SQ_TMP/venv.json" --mode $mode "$SQ_TMP/probe.py"
  grep -q "No module named 'sqprobe'" "$SQ_TMP/venv-default-$mode.json" || sq_fail_later "venv-default-$mode: sqprobe imported outside its profile"
done
# The venv's packages only: not Debian's, which it does not list.
run venv-numpy --config "$SQ_TMP/venv.json" --profile venv "$SQ_TMP/pandas.py"
grep -q "No module named 'pandas'" "$SQ_TMP/venv-numpy.json" || sq_fail_later "venv-numpy: Debian's pandas reached the venv profile"
echo "3: venv profile imports its module, no other profile does"

# 4. Limits per profile.
cat >"$SQ_TMP/limits.json" <<'JSON'
{"profiles": {"tight": {"max_limits": {"wall_ms": 1500}, "default_limits": {"output_kib": 1}}}}
JSON
printf 'import time\ntime.sleep(4)\nprint("late")\n' >"$SQ_TMP/sleep.py"
printf 'print("x" * 5000)\n' >"$SQ_TMP/flood.py"
for mode in spawn warm; do
  run tight-sleep-$mode --config "$SQ_TMP/limits.json" --mode $mode --profile tight --wall-ms 10000 "$SQ_TMP/sleep.py"
  expect tight-sleep-$mode status timeout
  run loose-sleep-$mode --config "$SQ_TMP/limits.json" --mode $mode --wall-ms 10000 "$SQ_TMP/sleep.py"
  expect loose-sleep-$mode status ok
  run tight-flood-$mode --config "$SQ_TMP/limits.json" --mode $mode --profile tight "$SQ_TMP/flood.py"
  expect tight-flood-$mode stdout_truncated true
  run loose-flood-$mode --config "$SQ_TMP/limits.json" --mode $mode "$SQ_TMP/flood.py"
  expect loose-flood-$mode stdout_truncated false
done
echo "4: a profile's max_limits and default_limits apply to its tasks only"

# 5. Broken profiles fail the start, never a task.
broken() { # NAME JSON WANT-in-stderr
  echo "$2" >"$SQ_TMP/$1.cfg"
  SANDQ_REDIS_URL=redis://127.0.0.1:1 "$W" serve --config "$SQ_TMP/$1.cfg" >"$SQ_TMP/$1.out" 2>&1
  rc=$?
  [ $rc = 2 ] || sq_fail_later "$1: serve exited $rc, want 2: $(tail -3 "$SQ_TMP/$1.out")"
  grep -q "$3" "$SQ_TMP/$1.out" || sq_fail_later "$1: the reason '$3' is not in: $(tail -3 "$SQ_TMP/$1.out")"
}
broken nopath '{"profiles": {"gone": {"packages": ["/nonexistent/site-packages"]}}}' \
  "packages: '/nonexistent/site-packages' is not a directory"
broken nomodule "{\"profiles\": {\"nomod\": {\"packages\": [\"$SITE\"], \"preload\": [\"sqprobe_missing\"]}}}" \
  "profiles.nomod.preload: .*No module named 'sqprobe_missing'"
broken badenv '{"profiles": {"env": {"env": {"LD_PRELOAD": "/x.so"}}}}' "LD_PRELOAD is set by the jail itself"
"$W" run --profile nope "$SQ_TMP/probe.py" >"$SQ_TMP/nope.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "'nope' is not a profile of this worker (it has: default, data)" "$SQ_TMP/nope.out" ||
  sq_fail_later "run --profile nope: exit $rc: $(cat "$SQ_TMP/nope.out")"
echo "5: broken profiles refused at start with the reason"

# 6. Hostile programs in the data profile.
MARK="/tmp/sandq-profile-pwned-$$"
cat >"$SQ_TMP/hostile.py" <<EOF
import ctypes, numpy as np, numpy.ctypeslib, pandas as pd, os
def attempt(name, f):
    try:
        r = f()
        print(name, "DONE", r)
    except BaseException as e:
        print(name, "contained", type(e).__name__)
libc = numpy.ctypeslib.load_library("libc.so.6", "/lib/x86_64-linux-gnu")
attempt("read_passwd", lambda: pd.read_csv("/etc/passwd", sep=":").shape)
attempt("read_shadow", lambda: pd.read_csv("/etc/shadow", sep=":").shape)
attempt("read_url", lambda: pd.read_csv("http://127.0.0.1:1/x.csv").shape)
attempt("read_proc", lambda: pd.read_csv("/proc/1/environ").shape)
attempt("np_fromfile", lambda: np.fromfile("/etc/hostname", dtype=np.uint8).size)
attempt("to_csv_tmp", lambda: pd.DataFrame({"a": [1]}).to_csv("$MARK.csv"))
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([1, 2])
attempt("savefig_tmp", lambda: plt.savefig("$MARK.png"))
attempt("savefig_usr", lambda: plt.savefig("/usr/lib/python3/dist-packages/$$.png"))
attempt("savefig_scratch", lambda: (plt.savefig("ok.png"), os.path.getsize("ok.png") > 0)[1])
EOF
# Calls the filter kills (the program ends policy_violation, naming the call).
for call in "ptrace(0, 0, 0, 0)" "unshare(0x20000)" "mount(b'none', b'/usr', b'tmpfs', 0, None)"; do
  name=${call%%(*}
  cat >"$SQ_TMP/$name.py" <<EOF
import numpy as np, numpy.ctypeslib
libc = numpy.ctypeslib.load_library("libc.so.6", "/lib/x86_64-linux-gnu")
libc.$call
print("after $name")
EOF
done
for mode in spawn warm; do
  run hostile-$mode --mode $mode --profile data --wall-ms 20000 "$SQ_TMP/hostile.py"
  out=$(field stdout <"$SQ_TMP/hostile-$mode.json")
  for a in read_passwd read_shadow read_url read_proc np_fromfile to_csv_tmp savefig_tmp savefig_usr; do
    echo "$out" | grep -q "^$a contained" || sq_fail_later "hostile-$mode: $a not contained: $(echo "$out" | grep "^$a") $(field stderr <"$SQ_TMP/hostile-$mode.json" | tail -3)"
  done
  echo "$out" | grep -q "^savefig_scratch DONE True" || sq_fail_later "hostile-$mode: savefig into the scratch failed: $out"
  for name in ptrace unshare mount; do
    run $name-$mode --mode $mode --profile data "$SQ_TMP/$name.py"
    expect $name-$mode status policy_violation
    expect $name-$mode blocked_syscall $name
  done
done
ls "$MARK".* /usr/lib/python3/dist-packages/$$.png 2>/dev/null && sq_fail_later "a hostile program wrote on the host"
echo "6: hostile data-profile programs contained"

# 3b. docs/configuration.md's venv example, as written, in a directory of its own.
mkdir -p "$SQ_TMP/docs"
awk '/^### A profile from a venv/{on=1} on && /^```sh/{code=1; next} code && /^```/{exit} code' \
  "$SQ_SRC/docs/configuration.md" >"$SQ_TMP/docs/example.sh"
[ -s "$SQ_TMP/docs/example.sh" ] || sq_fail_later "docs: no venv example in docs/configuration.md"
(cd "$SQ_TMP/docs" && PATH="$SQ_BIN:$PATH" sh -e example.sh) >"$SQ_TMP/docs.out" 2>"$SQ_TMP/docs.err" ||
  sq_fail_later "docs: the venv example failed: $(tail -3 "$SQ_TMP/docs.err")"
grep -q '"stdout":"hello from the venv en\\n"' "$SQ_TMP/docs.out" && grep -q '"profile":"venv"' "$SQ_TMP/docs.out" ||
  sq_fail_later "docs: the venv example printed: $(cat "$SQ_TMP/docs.out")"
echo "3b: the venv example of docs/configuration.md runs as written"

# 7. serve, warm: the data profile end to end.
. "$SQ_SRC/tests/lib/queue_env.sh"
sq_start_redis
P="$SQ_BIN/sandq-producer"
cat >"$SQ_TMP/w.json" <<JSON
{"scratch_root": "$SQ_TMP/scratch", "risk": "off", "max_attempts": 1, "jail_mode": "warm", "jail_pool_size": 1}
JSON
sq_bg w1 "$W" serve --config "$SQ_TMP/w.json" --worker-id w1
$PY - >"$SQ_TMP/t.jsonl" <<'PY'
import json
for i in range(10):
    print(json.dumps({"id": "pd-%d" % i, "profile": "data", "limits": {"wall_ms": 60000, "cpu_ms": 30000},
                      "code": "import pandas as pd\nprint(int(pd.Series(range(%d)).sum()))" % (i + 2),
                      "expected_stdout": "%d\n" % sum(range(i + 2))}))
print(json.dumps({"id": "plain", "code": "print(1)", "expected_stdout": "1\n"}))
print(json.dumps({"id": "no-pandas", "code": "import pandas"}))
print(json.dumps({"id": "unknown", "profile": "nope", "code": "print(1)"}))
PY
"$P" push --config "$SQ_TMP/w.json" --batch pr --wait --timeout-s 120 --out "$SQ_TMP/pr.bson" "$SQ_TMP/t.jsonl" \
  >"$SQ_TMP/push.out" 2>&1 || { cat "$SQ_TMP/push.out"; tail -20 "$SQ_TMP/w1.log"; sq_fail "batch pr did not complete"; }
$PY - "$SQ_TMP/pr.bson" <<'PY' || sq_fail_later "serve: results"
import bson, sys
docs = {d["_id"]: d for d in bson.decode_all(open(sys.argv[1], "rb").read())}
for i in range(10):
    d = docs["pd-%d" % i]
    assert d["status"] == "passed" and d["profile"] == "data" and d["jail"]["mode"] == "warm", d
assert docs["plain"]["status"] == "passed" and docs["plain"]["profile"] == "default", docs["plain"]
assert docs["no-pandas"]["status"] == "runtime_error", docs["no-pandas"]
u = docs["unknown"]
assert u["status"] == "invalid_task" and "'nope' is not a profile of this worker (it has: default, data)" in u["reason"], u
print("serve: 10 data tasks passed warm, default and unknown profiles as they should")
PY
sq_wait_for "[ \$($P audit --config $SQ_TMP/w.json --batch pr --json | wc -l) -ge 12 ]" 60 || sq_fail_later "audit: fewer than 12 entries"
"$P" audit --config "$SQ_TMP/w.json" --batch pr --json >"$SQ_TMP/pr.audit"
grep '"task":"pd-0"' "$SQ_TMP/pr.audit" | grep -q '"profile":"data"' || sq_fail_later "audit: no profile data for pd-0: $(cat "$SQ_TMP/pr.audit")"
grep '"task":"plain"' "$SQ_TMP/pr.audit" | grep -q '"profile":"default"' || sq_fail_later "audit: no profile default for plain"
echo "7: serve runs data tasks warm; profile in results and audit"

[ "$SQ_FAILURES" = 0 ] || sq_fail "$SQ_FAILURES check(s) failed"
echo "profiles: all checks passed"
