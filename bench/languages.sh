#!/bin/sh
# languages.sh: per language, a hello-world program compiled (when the
# language compiles) and run in the jail (`sandq-worker run --language L`,
# its run's wall_ms) against the same toolchain run bare on the host with
# the same commands, in a temporary directory; the median of N rounds each,
# side by side, and their ratio. A language whose toolchain is missing is
# left out.
# Then the compile cache: per compiled language, N+1 identical tasks through
# one `sandq-worker serve` (one task at a time, a real redis-server): the
# first compiles, the rest take the cached build (compile_cached); the
# median exec_ms of those hits against the bare compile+run and the bare
# run alone. And the interpreted languages through the same worker: the
# median exec_ms of N tasks after a first one, against the bare run; and
# node's standby one task at a time (cold against standby). Left out
# without redis-server.
#   sh bench/languages.sh [BUILD_DIR] [ROUNDS]    (root: the jail's namespaces)
set -eu
. "$(dirname "$0")/lib/init.sh"
BIN=$SQ_BIN
ROUNDS=${2:-5}
TMP=$SQ_TMP
export SANDQ_SCRATCH_ROOT="$TMP/scratch"
python3 - "$BIN/sandq-worker" "$TMP" "$ROUNDS" <<'PY'
import json, os, shutil, statistics, subprocess, sys, time

worker, tmp, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
jvm = ['-XX:+UseSerialGC', '-XX:-UsePerfData', '-XX:TieredStopAtLevel=1', '-XX:ActiveProcessorCount=1']
# language: (file, source, bare compile argv or None, bare run argv); the
# commands of common/formats/language.c, as a user would type them.
L = {
    'c': ('main.c', '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }',
          ['gcc', '-std=gnu11', '-O2', '-pipe', '-o', 'main', 'main.c', '-lm'], ['./main']),
    'cpp': ('main.cpp', '#include <iostream>\nint main() { std::cout << "hi" << std::endl; }',
            ['g++', '-std=gnu++17', '-O2', '-pipe', '-o', 'main', 'main.cpp', '-lm'], ['./main']),
    'go': ('main.go', 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hi") }',
           ['go', 'build', '-o', 'main', 'main.go'], ['./main']),
    'rust': ('main.rs', 'fn main() { println!("hi"); }',
             ['rustc', '--edition', '2021', '-C', 'debuginfo=0', '-C', 'opt-level=1', '-C', 'strip=debuginfo',
              '-o', 'main', 'main.rs'], ['./main']),
    'java': ('Problem.java', 'public class Problem { public static void main(String[] a) { System.out.println("hi"); } }',
             ['javac'] + ['-J' + f for f in jvm] + ['-d', '.', 'Problem.java'], ['java'] + jvm + ['-cp', '.', 'Problem']),
    'typescript': ('main.ts', 'const s: string = "hi";\nconsole.log(s);',
                   ['tsc', '--target', 'es2020', '--module', 'commonjs', 'main.ts'], ['node', 'main.js']),
    'javascript': ('main.js', 'console.log("hi");', None, ['node', 'main.js']),
    'ruby': ('main.rb', 'puts "hi"', None, ['ruby', 'main.rb']),
    'php': ('main.php', '<?php\necho "hi\\n";', None, ['php', '-n', 'main.php']),
    'lua': ('main.lua', 'print("hi")', None, ['lua5.4', 'main.lua']),
    'perl': ('main.pl', 'print "hi\\n";', None, ['perl', 'main.pl']),
    'bash': ('main.sh', 'echo hi', None, ['bash', 'main.sh']),
}
only = os.environ.get('SQ_LANGUAGES', '').split()
kept, bare_run = {}, {}  # the compiled languages' sources and bare figures, for the cache's table
interp = {}  # the interpreted ones', for the serving worker's table
env = dict(os.environ, GO111MODULE='off', CGO_ENABLED='0')
print('| language | jailed (median ms) | bare (median ms) | ratio |')
print('|---|---|---|---|')
for lang, (name, src, comp, run) in L.items():
    if only and lang not in only:
        continue
    # Debian's toolchains, as the jail runs them (not a rustup rustc on PATH)
    comp = comp and [shutil.which(comp[0], path='/usr/bin:/bin') or comp[0]] + comp[1:]
    run = [shutil.which(run[0], path='/usr/bin:/bin') or run[0]] + run[1:]
    if not os.path.isabs((comp or run)[0]):
        continue
    path = os.path.join(tmp, name)
    with open(path, 'w') as f:
        f.write(src + '\n')
    jailed, bare = [], []
    for _ in range(rounds):
        p = subprocess.run([worker, 'run', '--language', lang, path], capture_output=True, text=True)
        if p.returncode != 0:
            break
        o = json.loads(p.stdout)
        if o['status'] != 'ok':
            break
        jailed.append(o['wall_ms'])
        d = os.path.join(tmp, 'bare-' + lang)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        shutil.copy(path, d)
        benv = dict(env, HOME=d, GOCACHE=os.path.join(d, '.cache'), TMPDIR=d)
        t0 = time.monotonic()
        if comp and subprocess.run(comp, cwd=d, env=benv, capture_output=True).returncode != 0:
            break
        t1 = time.monotonic()
        if subprocess.run(run, cwd=d, env=benv, capture_output=True).returncode != 0:
            break
        bare.append((time.monotonic() - t0) * 1000)
        bare_run.setdefault(lang, []).append((time.monotonic() - t1) * 1000)
    if len(bare) < rounds:
        print('| %s | failed (%s) | | |' % (lang, 'bare' if len(jailed) > len(bare) else 'in the jail'))
        continue
    j, b = statistics.median(jailed), statistics.median(bare)
    print('| %s | %.0f | %.0f | %.2fx |' % (lang, j, b, j / b), flush=True)
    if comp:
        kept[lang] = {'source': src, 'bare_ms': b, 'bare_run_ms': statistics.median(bare_run[lang])}
    else:
        interp[lang] = {'source': src, 'bare_ms': b}
json.dump({'compiled': kept, 'interpreted': interp}, open(os.path.join(tmp, 'bare.json'), 'w'))
PY

command -v redis-server >/dev/null || { echo "(no redis-server: the compile cache's table is left out)"; exit 0; }
sq_start_redis
unset SANDQ_LLM_BASE_URL
SANDQ_MAX_TASKS_IN_FLIGHT=1 SANDQ_JAIL_THREADS=1 "$BIN/sandq-worker" serve --worker-id bench-langs >"$TMP/w.log" 2>&1 &
SQ_PIDS="$SQ_PIDS $!"
i=0; until grep -q "ready in" "$TMP/w.log"; do i=$((i + 1)); [ $i -lt 300 ] || sq_fail "the worker did not start"; sleep 0.1; done
echo
/usr/bin/python3 - "$BIN/sandq-producer" "$TMP" "$ROUNDS" <<'PY'
import bson, json, os, statistics, subprocess, sys

producer, tmp, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
bare = json.load(open(os.path.join(tmp, 'bare.json')))
kept = bare['compiled']


def through_worker(lang, source, n):
    """n identical tasks in lang through the serving worker, one at a time: their result documents."""
    tasks = os.path.join(tmp, 'serve-%s.jsonl' % lang)
    with open(tasks, 'w') as f:
        for i in range(n):
            f.write(json.dumps({'id': '%s-%d' % (lang, i), 'language': lang, 'code': source,
                                'limits': {'wall_ms': 60000, 'cpu_ms': 30000}}) + '\n')
    out = os.path.join(tmp, 'serve-%s.bson' % lang)
    p = subprocess.run([producer, 'push', '--batch', 'serve-' + lang, '--wait', '--timeout-s', '600', '--out', out, tasks],
                       capture_output=True, text=True)
    return bson.decode_all(open(out, 'rb').read()) if p.returncode == 0 else []


print('| language | jailed, compiled (ms) | jailed, cache hit (ms) | bare compile+run (ms) | bare run (ms) '
      '| hit / bare compile+run | hit / bare run |')
print('|---|---|---|---|---|---|---|')
for lang, k in kept.items():
    docs = through_worker(lang, k['source'], rounds + 1)
    miss = [d['timings']['exec_ms'] for d in docs if d['status'] == 'ok' and d.get('compile_cached') is False]
    hits = [d['timings']['exec_ms'] for d in docs if d['status'] == 'ok' and d.get('compile_cached') is True]
    if not miss or len(hits) < rounds:
        print('| %s | failed (%d compiled, %d hits) | | | | | |' % (lang, len(miss), len(hits)))
        continue
    h = statistics.median(hits)
    print('| %s | %.0f | %.0f | %.0f | %.0f | %.2fx | %.2fx |' % (lang, miss[0], h, k['bare_ms'], k['bare_run_ms'],
                                                              h / k['bare_ms'], h / k['bare_run_ms']), flush=True)

# The interpreted languages through the same serving worker: what a batch
# pays per task (a warm zygote's fork, workspace.py, the runtime's start),
# the median exec_ms of the tasks after the first, against the bare run.
print()
print('| language | serving worker (median exec_ms) | bare run (ms) | ratio |')
print('|---|---|---|---|')
for lang, k in bare['interpreted'].items():
    docs = through_worker(lang, k['source'], rounds + 1)
    ms = [d['timings']['exec_ms'] for d in docs if d['status'] == 'ok' and d['_id'] != lang + '-0']
    if len(ms) < rounds:
        print('| %s | failed (%d of %d ok) | | |' % (lang, len(ms), rounds))
        continue
    m = statistics.median(ms)
    print('| %s | %.0f | %.0f | %.2fx |' % (lang, m, k['bare_ms'], m / k['bare_ms']), flush=True)

# node's standby (docs/jail-performance.md, "Standby runtimes"), one task
# at a time as an agent sends them (each pushed once the last one's result
# is in): JavaScript, JavaScript again (it takes the standby the first
# left), then a Python task (the standby is dropped, so the next
# JavaScript starts cold), ROUNDS times; exec_ms and cpu_ms of the cold
# and the standby runs, side by side, against the bare run.
def one(tid, lang, code):
    tasks, out = os.path.join(tmp, 'one.jsonl'), os.path.join(tmp, 'one.bson')
    with open(tasks, 'w') as f:
        f.write(json.dumps({'id': tid, 'language': lang, 'code': code}) + '\n')
    p = subprocess.run([producer, 'push', '--batch', 'one-' + tid, '--wait', '--timeout-s', '600', '--out', out, tasks],
                       capture_output=True, text=True)
    return bson.decode_all(open(out, 'rb').read())[0] if p.returncode == 0 else {}
if 'javascript' in bare['interpreted']:
    src = bare['interpreted']['javascript']['source']
    cold, warm = [], []
    for r in range(rounds):
        for kind in ('cold', 'warm'):
            d = one('js-%s-%d' % (kind, r), 'javascript', src)
            if d.get('status') == 'ok' and bool(d.get('jail', {}).get('standby')) == (kind == 'warm'):
                (warm if kind == 'warm' else cold).append(d)
        one('py-%d' % r, 'python', 'import json\nprint(json.dumps(1))')  # a full zygote's, as node's
    if len(cold) < rounds or len(warm) < rounds:
        print('node standby: failed (%d cold, %d standby of %d)' % (len(cold), len(warm), rounds))
    else:
        med = lambda ds, f: statistics.median(d[f[0]][f[1]] for d in ds)
        ce, we = med(cold, ('timings', 'exec_ms')), med(warm, ('timings', 'exec_ms'))
        print()
        print('node, one task at a time: cold exec_ms %.0f (cpu_ms %.0f), standby %.0f (cpu_ms %.0f): %.2fx cold, '
              '%.2fx the bare run (%.0f ms)' % (ce, med(cold, ('resources', 'cpu_ms')), we,
                                                med(warm, ('resources', 'cpu_ms')), we / ce,
                                                we / bare['interpreted']['javascript']['bare_ms'],
                                                bare['interpreted']['javascript']['bare_ms']), flush=True)
PY
