"""languages.py: MultiPL-E-style samples for every language sandq runs,
shared by tests/integration/languages.sh (sandq-worker run) and
languages_worker.sh (tasks through workers)."""

import json as _json
import os as _os

EXT = {'c': 'c', 'cpp': 'cpp', 'javascript': 'js', 'typescript': 'ts', 'go': 'go', 'rust': 'rs', 'java': 'java',
        'ruby': 'rb', 'php': 'php', 'lua': 'lua', 'perl': 'pl', 'bash': 'sh'}
_COMPILED = ('c', 'cpp', 'typescript', 'go', 'rust', 'java')


def _fixture(lang):
    with open(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), '..', 'data', 'calls', lang + '.json')) as f:
        return _json.load(f)


# name: (extension, correct code, wrong code, tests, code that does not compile or None), from the
# calls judge's fixtures (tests/data/calls: MultiPL-E-shaped tests each language's judge takes).
L = {}
for _lang, _ext in EXT.items():
    _fx = _fixture(_lang)
    L[_lang] = (_ext, _fx['correct'], _fx['wrong'], _fx['tests'],
                _fx['correct'] + '\n@@@\n' if _lang in _COMPILED else None)
def worker_run(worker, tmp, lang, name, code, tests=None, failures=None):
    """`sandq-worker run --language lang` on code (and tests) in the jail:
    its JSON result; None when this host lacks the toolchain; {} when the
    run itself failed (noted in failures)."""
    import subprocess
    src = _os.path.join(tmp, '%s-%s.%s' % (lang, name, EXT[lang]))
    with open(src, 'w') as f:
        f.write(code + '\n')
    argv = [worker, 'run', '--language', lang, src]
    if tests is not None:
        with open(src + '.tests', 'w') as f:
            f.write(tests + '\n')
        argv[4:4] = ['--tests', src + '.tests']
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode == 2 and 'not installed here' in p.stderr:
        return None
    if p.returncode != 0:
        if failures is not None:
            failures.append('%s %s: exit %d: %s' % (lang, name, p.returncode, p.stderr[-400:]))
        return {}
    return _json.loads(p.stdout)


# What the judge says when the wrong code fails its test (in the reason): the call and both values.
WHY = {lang: 'expected' for lang in L}
# The compiler's first diagnostic (in the compile_error's reason).
DIAG = {'c': 'error', 'cpp': 'error', 'typescript': 'error TS', 'go': 'invalid character', 'rust': 'error',
        'java': 'error'}


# Abuse payloads in other languages than Python: (language, name, code,
# statuses allowed, text stdout must hold or None, blocked_syscall wanted or
# None). Each prints what it got, so a hole shows as a wrong stdout.
ABUSE = [
 ('c', 'socket', '#include <stdio.h>\n#include <sys/socket.h>\nint main(void) {\n'
  '  printf("inet %d\\n", socket(AF_INET, SOCK_STREAM, 0));\n'
  '  printf("inet6 %d\\n", socket(AF_INET6, SOCK_DGRAM, 0));\n  return 0;\n}',
  ('ok',), 'inet -1\ninet6 -1', None),
 ('c', 'raw-ptrace', '#include <sys/syscall.h>\n#include <unistd.h>\n'
  'int main(void) { syscall(SYS_ptrace, 0, 0, 0, 0); return 0; }', ('policy_violation',), None, 'ptrace'),
 ('c', 'raw-unshare', '#include <sys/syscall.h>\n#include <unistd.h>\n'
  'int main(void) { syscall(SYS_unshare, 0x10000000 /* CLONE_NEWUSER */); return 0; }', ('policy_violation',), None,
  'unshare'),
 ('c', 'write-outside', '#include <stdio.h>\nint main(void) {\n'
  '  const char *p[] = {"/usr/x", "/tmp/x", "/etc/x", "/x", "/proc/self/x"};\n'
  '  for (int i = 0; i < 5; i++) printf("%s %s\\n", p[i], fopen(p[i], "w") ? "written" : "refused");\n  return 0;\n}',
  ('ok',), '/usr/x refused\n/tmp/x refused\n/etc/x refused\n/x refused\n/proc/self/x refused', None),
 ('c', 'read-host', '#include <stdio.h>\nint main(void) {\n'
  '  const char *p[] = {"/etc/passwd", "/etc/shadow", "/root/.bashrc", "/proc/1/environ"};\n'
  '  for (int i = 0; i < 4; i++) printf("%s %s\\n", p[i], fopen(p[i], "r") ? "read" : "absent");\n  return 0;\n}',
  ('ok',), '/etc/passwd absent\n/etc/shadow absent\n/root/.bashrc absent\n/proc/1/environ absent', None),
 ('c', 'flood', '#include <stdio.h>\nint main(void) { for (;;) fputs("flood flood flood flood\\n", stdout); }',
  ('output_limit',), None, None),
 ('javascript', 'socket', "const net = require('net');\n"
  "const s = net.connect(80, '1.1.1.1', () => console.log('connected'));\n"
  "s.on('error', e => console.log('refused ' + e.code));", ('ok',), 'refused', None),
 ('javascript', 'write-outside', "const fs = require('fs');\n"
  "for (const p of ['/usr/x', '/tmp/x', '/etc/x', '/x']) {\n"
  "  try { fs.writeFileSync(p, 'x'); console.log(p + ' written'); } catch (e) { console.log(p + ' refused'); }\n}",
  ('ok',), '/usr/x refused\n/tmp/x refused\n/etc/x refused\n/x refused', None),
 ('javascript', 'read-host', "const fs = require('fs');\n"
  "for (const p of ['/etc/passwd', '/etc/shadow', '/proc/1/environ']) {\n"
  "  try { fs.readFileSync(p); console.log(p + ' read'); } catch (e) { console.log(p + ' absent'); }\n}",
  ('ok',), '/etc/passwd absent\n/etc/shadow absent\n/proc/1/environ absent', None),
 ('javascript', 'flood', "const s = 'flood '.repeat(1000) + '\\n';\nfor (;;) process.stdout.write(s);",
  ('output_limit', 'memory_limit', 'cpu_limit', 'timeout'), None, None),  # node queues writes the jail no longer reads
 ('javascript', 'fork-bomb', "const cp = require('child_process');\nlet n = 0;\n"
  "for (let i = 0; i < 200; i++) { try { cp.spawn('/usr/bin/node', ['-e', 'setInterval(() => {}, 1000)']); n++; }"
  " catch (e) {} }\nsetTimeout(() => {}, 60000);",
  ('timeout', 'cpu_limit', 'memory_limit', 'runtime_error'), None, None),
 ('go', 'raw-ptrace', 'package main\n\nimport "syscall"\n\n'
  'func main() { syscall.Syscall(syscall.SYS_PTRACE, 0, 0, 0) }', ('policy_violation',), None, 'ptrace'),
 ('go', 'socket', 'package main\n\nimport (\n\t"fmt"\n\t"net"\n)\n\nfunc main() {\n'
  '\t_, err := net.Dial("tcp", "1.1.1.1:80")\n\tfmt.Println("refused", err != nil)\n}', ('ok',), 'refused true', None),
]

# Threads and timers, against the filter's per-language widenings
# (docs/security.md, "Languages"): (language, name, code, text stdout must
# hold, text stderr must hold or None, text stderr must not hold or None).
# Ruby keeps the POSIX timer calls (its timer thread warns without them);
# every other language gets EPERM for them, and its threads still run.
WIDEN = [
 ('ruby', 'threads', 'ts = 4.times.map { |i| Thread.new { (1..100000).sum + i } }\n'
  'q = Queue.new\nt = Thread.new { q.pop }\nsleep 0.05\nq << 1\nt.join\nputs ts.map(&:value).sum',
  '20000200006', None, 'timer_create'),
 ('bash', 'ruby-threads', "ruby -e 'puts Thread.new { 6 * 7 }.value'", '42', 'timer_create failed', None),
 ('c', 'timer-create', '#include <stdio.h>\n#include <errno.h>\n#include <time.h>\n#include <unistd.h>\n'
  '#include <sys/syscall.h>\nint main(void) {\n  int id;\n  long r = syscall(SYS_timer_create, CLOCK_MONOTONIC, NULL, &id);\n'
  '  printf("timer_create %ld %s\\n", r, r ? (errno == EPERM ? "EPERM" : "other") : "made");\n  return 0;\n}',
  'timer_create -1 EPERM', None, None),
 ('java', 'threads', 'class Problem {\n  public static void main(String[] a) throws Exception {\n'
  '    long[] s = new long[4];\n    Thread[] t = new Thread[4];\n'
  '    for (int i = 0; i < 4; i++) { final int k = i; t[i] = new Thread(() -> { for (int j = 0; j < 100000; j++) s[k] += j; }); t[i].start(); }\n'
  '    for (Thread x : t) x.join();\n    Thread.sleep(50);\n    System.out.println(s[0] + s[1] + s[2] + s[3]);\n  }\n}',
  '19999800000', None, None),
 ('go', 'goroutines', 'package main\n\nimport (\n\t"fmt"\n\t"sync"\n\t"time"\n)\n\nfunc main() {\n'
  '\tvar wg sync.WaitGroup\n\ts := make([]int, 4)\n\tfor i := 0; i < 4; i++ {\n\t\twg.Add(1)\n'
  '\t\tgo func(k int) { defer wg.Done(); for j := 0; j < 100000; j++ { s[k] += j } }(i)\n\t}\n'
  '\twg.Wait()\n\ttime.Sleep(50 * time.Millisecond)\n\tfmt.Println(s[0] + s[1] + s[2] + s[3])\n}',
  '19999800000', None, None),
 ('javascript', 'worker', "const { Worker } = require('worker_threads');\n"
  "const w = new Worker('let s = 0; for (let i = 0; i < 100000; i++) s += i; require(\"worker_threads\").parentPort.postMessage(s);', { eval: true });\n"
  "w.on('message', s => setTimeout(() => console.log(s), 50));",
  '4999950000', None, None),
]
