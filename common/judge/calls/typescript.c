/* typescript.c: TypeScript's rule (calls.h): MultiPL-E's template, the
 * JavaScript one with `declare var require: any;` first for tsc. */
#include "calls_internal.h"

const sq_calls_rule sq__calls_rule_typescript = {
    .language = SQ_LANGUAGE_TYPESCRIPT,
    .asserts = {{"assert.deepEqual(@C, @E);", "__sq_emit(@I, @C);", "__sq_emit(@I, @E);"}},
    .lines = {{"declare var require: any;", NULL, NULL},
              {"const assert = require('node:assert');", NULL, ""},
              {"function test() {", NULL, NULL},
              {"let candidate = @N;", NULL, ""},
              {"}", NULL, NULL},
              {"test();", NULL, NULL}},
    .quotes = "\"'`",
    .driver = sq__calls_driver_typescript,
};
