"""languages.py: MultiPL-E-style samples for every language sandq runs,
shared by tests/integration/languages.sh (sandq-worker run) and
languages_worker.sh (tasks through workers)."""

# name: (extension, correct code, wrong code, tests, code that does not compile or None)
L = {
 'c': ('c', 'int add(int a, int b) { return a + b; }', 'int add(int a, int b) { return a - b; }',
       '#include <assert.h>\nint main(void) { assert(add(2, 3) == 5); return 0; }', 'int add(int a, int b) { return a + ; }'),
 'cpp': ('cpp', '#include <vector>\nint add(int a, int b) { std::vector<int> v{a, b}; return v[0] + v[1]; }',
         'int add(int a, int b) { return a - b; }',
         '#include <cassert>\nint main() { assert(add(2, 3) == 5); }', 'int add(int a, int b) { return a + b }'),
 'javascript': ('js', 'function add(a, b) { return a + b; }', 'function add(a, b) { return a - b; }',
                "const assert = require('node:assert');\nassert.deepEqual(add(2, 3), 5);", None),
 'typescript': ('ts', 'function add(a: number, b: number): number { return a + b; }',
                'function add(a: number, b: number): number { return a - b; }',
                "declare var require: any;\nconst assert = require('node:assert');\nassert.deepEqual(add(2, 3), 5);",
                'function add(a: number, b: number): number { return "x"; }'),
 'go': ('go', 'package main\n\nfunc add(a int, b int) int { return a + b }',
        'package main\n\nfunc add(a int, b int) int { return a - b }',
        'func main() {\n\tif add(2, 3) != 5 {\n\t\tpanic("assertion failed: add(2, 3) != 5")\n\t}\n}',
        'package main\n\nfunc add(a int, b int) int { return a + "b" }'),
 'rust': ('rs', 'fn add(a: i64, b: i64) -> i64 { a + b }', 'fn add(a: i64, b: i64) -> i64 { a - b }',
          'fn main() { assert_eq!(add(2, 3), 5); }', 'fn add(a: i64, b: i64) -> i64 { a + "b" }'),
 'java': ('java', 'import java.util.*;\n\nclass Problem {\n    public static long add(long a, long b) { return a + b; }',
          'class Problem {\n    public static long add(long a, long b) { return a - b; }',
          '    public static void main(String[] args) {\n        assert(add(2, 3) == 5);\n    }\n}',
          'class Problem {\n    public static long add(long a, long b) { return a + ; }'),
 'ruby': ('rb', 'def add(a, b)\n  a + b\nend', 'def add(a, b)\n  a - b\nend',
          'raise "add(2, 3) is not 5" unless add(2, 3) == 5', None),
 'php': ('php', '<?php\nfunction add($a, $b) { return $a + $b; }', '<?php\nfunction add($a, $b) { return $a - $b; }',
         'if (add(2, 3) !== 5) { throw new Exception("Test failed!"); }', None),
 'lua': ('lua', 'function add(a, b) return a + b end', 'function add(a, b) return a - b end',
         'assert(add(2, 3) == 5)', None),
 'perl': ('pl', 'sub add { my ($a, $b) = @_; return $a + $b; }', 'sub add { my ($a, $b) = @_; return $a - $b; }',
          'die "add(2, 3) is not 5\\n" unless add(2, 3) == 5;', None),
 'bash': ('sh', 'add() { echo $(( $1 + $2 )); }', 'add() { echo $(( $1 - $2 )); }',
          '[ "$(add 2 3)" = 5 ] || { echo "add 2 3 is not 5" >&2; exit 1; }', None),
}
# What each runtime says when the wrong code fails its test (in the reason).
WHY = {'c': 'Assertion', 'cpp': 'Assertion', 'javascript': 'AssertionError', 'typescript': 'AssertionError',
       'go': 'panic: assertion failed', 'rust': 'panicked', 'java': 'AssertionError', 'ruby': 'is not 5',
       'php': 'Test failed!', 'lua': 'assertion failed', 'perl': 'is not 5', 'bash': 'is not 5'}
# The compiler's first diagnostic (in the compile_error's reason).
DIAG = {'c': 'error', 'cpp': 'error', 'typescript': 'error TS', 'go': 'mismatched types', 'rust': 'error',
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
