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

