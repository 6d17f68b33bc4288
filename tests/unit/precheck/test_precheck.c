/* test_precheck.c: the static pre-check: each finding kind, aliases, the
 * allowlist, the block/record decision, and no findings from strings,
 * comments and f-string literal text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "errors.h"
#include "precheck.h"

static sq_precheck_config cfg;
static sq_precheck_report rep;

/* Runs the check and returns "kind:detail@line:col ..." */
static char got[4096];
static const char *check(const char *src) {
  CHECK_EQ(sq_precheck_check(&cfg, src, strlen(src), &rep), 0);
  size_t n = 0;
  got[0] = '\0';
  for (size_t i = 0; i < rep.n && n < sizeof got; i++)
    n += (size_t)snprintf(got + n, sizeof got - n, "%s%s:%s@%d:%d", i ? " " : "",
                          sq_precheck_kind_name(rep.items[i].kind), rep.items[i].detail, rep.items[i].line,
                          rep.items[i].col);
  return got;
}

static void test_imports(void) {
  CHECK_STR(check("import math, re\nfrom typing import List\nfrom collections.abc import Iterable\n"), "");
  CHECK_STR(check("import os\n"), "import:os@1:8");
  CHECK_STR(check("import os.path as p, socket\n"), "import:os.path@1:8 import:socket@1:22");
  CHECK_STR(check("from ctypes import CDLL, c_int\n"), "import:ctypes@1:6");
  CHECK_STR(check("from . import x\n"), "import:.@1:6");
  CHECK_STR(check("if x: from socket import *\n"), "import:socket@1:12");
  CHECK_STR(check("x = 1; import pickle\n"), "import:pickle@1:15");
  CHECK_STR(check("from os import (\n    path,\n    sep)\n"), "import:os@1:6");
  /* "mathx" is not "math"; "math.foo" is under "math" */
  CHECK_STR(check("import mathx\nimport math.foo\n"), "import:mathx@1:8");
  /* raise ... from is not an import */
  CHECK_STR(check("raise ValueError() from err\n"), "");
  /* __import__ and importlib with a literal name are imports too */
  CHECK_STR(check("m = __import__('socket')\n"), "dynamic_import:__import__@1:5 import:socket@1:16");
  CHECK_STR(check("import importlib\nimportlib.import_module('math')\n"),
            "import:importlib@1:8 dynamic_import:importlib@1:8 dynamic_import:importlib.import_module@2:1");
}

static void test_calls(void) {
  CHECK_STR(check("eval('1')\nexec(c)\ncompile(s, 'f', 'exec')\n"),
            "eval:eval@1:1 eval:exec@2:1 eval:compile@3:1");
  CHECK_STR(check("import os\nos.system('id')\nos.popen('id')\nos.execv('/bin/sh', [])\n"),
            "import:os@1:8 process:os.system@2:1 process:os.popen@3:1 process:os.execv@4:1");
  /* aliases: import as, from import (as) */
  CHECK_STR(check("import subprocess as sp\nsp.run(['id'])\n"),
            "import:subprocess@1:8 process:subprocess@1:8 process:subprocess.run@2:1");
  CHECK_STR(check("from os import system as s\ns('id')\n"),
            "import:os@1:6 process:os.system@1:16 process:os.system@2:1");
  CHECK_STR(check("from builtins import eval as e\ne('1')\n"),
            "import:builtins@1:6 eval:builtins.eval@1:22 eval:builtins.eval@2:1");
  /* a reference without a call is enough */
  CHECK_STR(check("f = eval\n"), "eval:eval@1:5");
  /* methods and definitions that merely share the name are not calls of it */
  CHECK_STR(check("df.eval('a')\nx.system()\ndef eval(a): pass\nclass exec: pass\nf(eval=1)\n"), "");
}

static void test_dunders(void) {
  CHECK_STR(check("().__class__.__bases__[0].__subclasses__()\n"),
            "dunder:__bases__@1:14 dunder:__subclasses__@1:27");
  CHECK_STR(check("f.__globals__['os']\n__builtins__.open\n"),
            "dunder:__globals__@1:3 dunder:__builtins__@2:1");
  CHECK_STR(check("import sys\nsys._getframe().f_back.f_globals\n"),
            "dunder:_getframe@2:5 dunder:f_back@2:17 dunder:f_globals@2:24");
  CHECK_STR(check("getattr(f, '__globals__')\n"), "dunder:__globals__ (in a string)@1:12");
  /* __class__, __name__, __init__ are everyday code */
  CHECK_STR(check("if __name__ == '__main__': print(self.__class__.__name__)\n"), "");
}

static void test_loops(void) {
  CHECK_STR(check("while True:\n    x += 1\n"), "endless_loop:while True with no break, return or raise@1:1");
  CHECK_STR(check("while 1: pass\ny = 2\n"), "endless_loop:while True with no break, return or raise@1:1");
  CHECK_STR(check("while (True):\n    pass\n"), "endless_loop:while True with no break, return or raise@1:1");
  CHECK_STR(check("while True:\n    if x:\n        break\n"), "");
  CHECK_STR(check("def f():\n    while True:\n        if g(): return 1\n"), "");
  CHECK_STR(check("while True:\n    raise StopIteration\n"), "");
  CHECK_STR(check("while x:\n    pass\n"), "");
  /* a break of an inner loop does not end the outer one */
  CHECK_STR(check("while True:\n    for i in y:\n        break\n    z = 1\n"),
            "endless_loop:while True with no break, return or raise@1:1");
  CHECK_STR(check("def f():\n    while True:\n        def g():\n            return 1\n"),
            "endless_loop:while True with no break, return or raise@2:5");
  /* after the loop ends, a break belongs elsewhere */
  CHECK_STR(check("for a in b:\n    while True:\n        pass\n    break\n"),
            "endless_loop:while True with no break, return or raise@2:5");
  /* a comprehension's for is not a loop statement */
  CHECK_STR(check("while True:\n    x = [i for i in y]\n    break\n"), "");
}

/* Keywords in strings, comments and f-string text are not code. */
static void test_not_code(void) {
  CHECK_STR(check("s = 'import os; eval(x); os.system(1)'\n"), "");
  CHECK_STR(check("# import os\n# while True:\nx = 1  # eval(y)\n"), "");
  CHECK_STR(check("d = '''\nimport socket\nwhile True:\n    pass\n'''\n"), "");
  CHECK_STR(check("b = rb'__subclasses__ exec(' + u\"__import__('os')\"\n"), "");
  CHECK_STR(check("f'import os {x} eval( {{__globals__}}'\n"), "");
  CHECK_STR(check("f'{x:>{w}} while True: {y!r}'\n"), "");
  CHECK_STR(check("\"\"\"Docstring: use eval() and import os.\"\"\"\n"), "");
}

/* f-string fields are code, at their own positions. */
static void test_fstring_code(void) {
  CHECK_STR(check("x = f\"{__import__('os').system('id')}\"\n"),
            "dynamic_import:__import__@1:8 import:os@1:19");
  CHECK_STR(check("f'{x:{eval(\"1\")}}'\n"), "eval:eval@1:7");
  CHECK_STR(check("f'''\n{().__class__.__bases__}'''\n"), "dunder:__bases__@2:15");
  CHECK_STR(check("f'{f\"{eval(x)}\"}'\n"), "eval:eval@1:7");
}

static void test_decision(void) {
  char reason[512];
  check("import os\neval('1')\n");
  CHECK(!rep.blocked); /* imports and eval are recorded by default */
  CHECK_EQ(rep.n, 2);
  check("import os\nos.system('id')\n");
  CHECK(rep.blocked);
  sq_precheck_reason(&cfg, &rep, reason, sizeof reason);
  CHECK_STR(reason, "static pre-check: process 'os.system' at 2:1");
  cfg.action[SQ_FINDING_PROCESS] = SQ_PRECHECK_RECORD;
  check("import os\nos.system('id')\n");
  CHECK(!rep.blocked);
  CHECK_EQ(rep.n, 2);
  cfg.action[SQ_FINDING_EVAL] = SQ_PRECHECK_BLOCK;
  cfg.action[SQ_FINDING_IMPORT] = SQ_PRECHECK_BLOCK;
  check("import os\nx = eval('1')\n");
  CHECK(rep.blocked);
  sq_precheck_reason(&cfg, &rep, reason, sizeof reason);
  CHECK_STR(reason, "static pre-check: import 'os' at 1:8; eval 'eval' at 2:5");
  /* an allowlist of one's own */
  snprintf(cfg.import_allowlist, sizeof cfg.import_allowlist, "numpy, os.path");
  cfg.action[SQ_FINDING_IMPORT] = SQ_PRECHECK_BLOCK;
  check("import numpy.linalg\nfrom os.path import join\nfrom os import path\n");
  CHECK(!rep.blocked);
  check("import math\n");
  CHECK(rep.blocked);
  CHECK_EQ(sq_precheck_allowlist_validate("a, b.c,d_1"), 0);
  CHECK_EQ(sq_precheck_allowlist_validate("a; rm -rf"), SQ_EINVAL);
  sq_precheck_defaults(&cfg);

  /* many findings: 64 kept, blocking ones win a full report */
  char big[20000];
  size_t n = 0;
  for (int i = 0; i < 100; i++) n += (size_t)snprintf(big + n, sizeof big - n, "eval(x)\n");
  snprintf(big + n, sizeof big - n, "__builtins__\n");
  check(big);
  CHECK_EQ(rep.n, SQ_PRECHECK_MAX_FINDINGS);
  CHECK_EQ(rep.n_total, 101);
  CHECK(rep.blocked);
  CHECK_EQ(rep.items[rep.n - 1].kind, SQ_FINDING_DUNDER);
  sq_precheck_reason(&cfg, &rep, reason, sizeof reason);
  CHECK_STR(reason, "static pre-check: dunder '__builtins__' at 101:1 (101 findings in all)");

  /* errors: one syntax finding (recorded), NULLs */
  CHECK_STR(check("x = 'abc\ny = $\n"), "syntax:unterminated string@1:5");
  CHECK_EQ(sq_precheck_check(&cfg, NULL, 3, &rep), SQ_EINVAL);
  CHECK_EQ(sq_precheck_check(&cfg, NULL, 0, &rep), 0);
  CHECK_EQ(sq_precheck_check(NULL, "x", 1, &rep), SQ_EINVAL);

  sq_finding_kind k;
  sq_precheck_action a;
  CHECK_EQ(sq_precheck_kind_parse("endless_loop", &k), 0);
  CHECK_EQ(k, SQ_FINDING_ENDLESS_LOOP);
  CHECK_EQ(sq_precheck_kind_parse("nope", &k), SQ_EINVAL);
  CHECK_EQ(sq_precheck_action_parse("block", &a), 0);
  CHECK_EQ(a, SQ_PRECHECK_BLOCK);
  CHECK_EQ(sq_precheck_action_parse("warn", &a), SQ_EINVAL);
}

/* Names as Python reads them: NFKC identifiers, coding cookies. */
static void test_python_reads(void) {
  /* fullwidth letters: os.ｓｙｓｔｅｍ is os.system, __ｂａｓｅｓ__ is __bases__ */
  CHECK_STR(check("import os\nos.\xef\xbd\x93\xef\xbd\x99\xef\xbd\x93\xef\xbd\x94\xef\xbd\x85\xef\xbd\x8d('id')\n"),
            "import:os@1:8 process:os.system@2:1 unicode_name:a name that reads as 'system'@2:4");
  CHECK_STR(check("().__class__.__\xef\xbd\x82\xef\xbd\x81\xef\xbd\x93\xef\xbd\x85\xef\xbd\x93__\n"),
            "unicode_name:a name that reads as '__bases__'@1:14 dunder:__bases__@1:14");
  /* mathematical bold s, the long s, a ligature: `ſubprocess`, `ｅｖａｌ` as an alias target */
  CHECK_STR(check("import \xc5\xbfubprocess\n"),
            "unicode_name:a name that reads as 'subprocess'@1:8 import:subprocess@1:8 process:subprocess@1:8");
  CHECK_STR(check("x = \xf0\x9d\x90\x9eval\n"), "unicode_name:a name that reads as 'eval'@1:5 eval:eval@1:5");
  CHECK_STR(check("\xef\xac\x81le = 1\n"), "unicode_name:a name that reads as 'file'@1:1");
  /* names that NFKC leaves alone are nobody's business; keywords are not normalised */
  CHECK_STR(check("\xe5\x80\xbc = 1\ncaf\xc3\xa9 = \xe5\x80\xbc\n"), "");
  /* coding cookies: UTF-8 and Latin-1 are read; others are findings */
  CHECK_STR(check("# -*- coding: utf-8 -*-\nx = 1\n"), "");
  CHECK_STR(check("#!/usr/bin/env python3\n# coding=UTF_8\nx = 1\n"), "");
  CHECK_STR(check("# coding: utf-7\n+AGkAbQBwAG8AcgB0- os\n"),
            "encoding:utf-7: only UTF-8 and Latin-1 sources are read@1:3");
  CHECK_STR(check("\n# vim: set fileencoding=raw_unicode_escape :\n"),
            "encoding:raw-unicode-escape: only UTF-8 and Latin-1 sources are read@2:18");
  /* a cookie after code on line 1, or on line 3, is not one (Python ignores it) */
  CHECK_STR(check("x = 1\n# coding: utf-7\n"), "");
  CHECK_STR(check("#\n#\n# coding: utf-7\n"), "");
  CHECK_STR(check("# CODING: utf-7\n"), "");
  /* Latin-1: the byte 0xBA is U+00BA, whose NFKC is 'o': __impºrt__ is __import__ */
  CHECK_STR(check("# coding: latin-1\n__imp\xbart__('os')\n"),
            "unicode_name:a name that reads as '__import__'@2:1 dynamic_import:__import__@2:1 import:os@2:12");
  /* the same byte under UTF-8 is no character: nothing to read it as */
  CHECK_STR(check("__imp\xbart__('os')\n"), "");
}

/* Modules reached through other modules; getattr with a computed name. */
static void test_walks(void) {
  CHECK_STR(check("import random\nrandom._os.system('sh')\n"),
            "module_walk:random._os@2:1 process:os.system@2:1");
  CHECK_STR(check("import typing\nf = typing.sys\n"), "module_walk:typing.sys@2:5");
  CHECK_STR(check("import tempfile as t\nt._os.popen('id')\n"),
            "import:tempfile@1:8 module_walk:tempfile._os@2:1 process:os.popen@2:1");
  CHECK_STR(check("from random import _os\n_os.system('id')\n"),
            "module_walk:random._os@1:20 module_walk:random._os@2:1 process:os.system@2:1");
  CHECK_STR(check("import sys\nm = sys.modules['os']\n"), "module_walk:sys.modules@2:5");
  /* a private gateway is one whatever it hangs on */
  CHECK_STR(check("x = obj._subprocess\n"), "module_walk:obj._subprocess@1:5 process:subprocess@1:5");
  /* ordinary module attributes are not walks */
  CHECK_STR(check("import os.path, collections\nos.path.join('a')\ncollections.abc.Iterable\nsys = 1\nx.os = 2\n"),
            "import:os.path@1:8");
  /* getattr: a plain string name is fine, anything computed is a finding */
  CHECK_STR(check("getattr(x, 'y')\ngetattr(x, 'y', None)\ngetattr(f(a, b), \"z\")\n"), "");
  CHECK_STR(check("import sys\ngetattr(sys.modules['builtins'], '_' + '_import__')\n"),
            "getattr:getattr with a computed attribute name@2:1 module_walk:sys.modules@2:9");
  CHECK_STR(check("getattr(x, name)\n"), "getattr:getattr with a computed attribute name@1:1");
  CHECK_STR(check("getattr(x, 'a' 'b')\n"), "getattr:getattr with a computed attribute name@1:1");
  CHECK_STR(check("getattr(x, f'{a}')\n"), "getattr:getattr with a computed attribute name@1:1");
  CHECK_STR(check("import builtins\nbuiltins.getattr(x, ''.join(p))\n"),
            "import:builtins@1:8 getattr:getattr with a computed attribute name@2:1");
  /* nested: the outer name is computed by the inner call */
  CHECK_STR(check("getattr(getattr(x, 'a'), getattr(y, 'b'))\n"),
            "getattr:getattr with a computed attribute name@1:1");
  CHECK_STR(check("getattr(getattr(x, n), 'a')\n"), "getattr:getattr with a computed attribute name@1:9");
}

/* Random sources built of the pieces the new readings look at: nothing
 * crashes (the sanitizer and valgrind builds run this), at most 64 kept. */
static void test_random_readings(void) {
  static const char *const pieces[] = {"# coding: latin-1\n", "# coding=utf-7\n", "#\n", "\n", "getattr(", ",", ")",
                                       "(", "'a'", "'b' ", "+", "x", ".", "_os", "sys.modules", "import ", "random",
                                       "\xef\xbd\x93", "\xf0\x9d\x90\x9e", "\xe2\x85\xa7", "\xba", "\xc5", "\xff",
                                       "__", "f'{", "}'", " as ", "from ", "\r\n"};
  unsigned seed = 4242;
  char buf[600];
  for (int iter = 0; iter < 20000; iter++) {
    size_t len = 0;
    while (len < sizeof buf - 32) {
      seed = seed * 1103515245u + 12345u;
      unsigned r = seed >> 8;
      if (r % 61 == 0) break;
      const char *p = pieces[r % (sizeof pieces / sizeof *pieces)];
      memcpy(buf + len, p, strlen(p));
      len += strlen(p);
    }
    CHECK_EQ(sq_precheck_check(&cfg, buf, len, &rep), 0);
    CHECK(rep.n <= SQ_PRECHECK_MAX_FINDINGS);
  }
}

int main(void) {
  sq_precheck_defaults(&cfg);
  test_imports();
  test_calls();
  test_dunders();
  test_loops();
  test_not_code();
  test_fstring_code();
  test_decision();
  test_python_reads();
  test_walks();
  test_random_readings();
  return sq_check_done("test_precheck");
}
