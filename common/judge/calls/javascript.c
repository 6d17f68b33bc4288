/* javascript.c: JavaScript's rule (calls.h): MultiPL-E's template,
 * `assert.deepEqual(candidate(...),expected);` lines in a test() function. */
#include "calls_internal.h"

const sq_calls_rule sq__calls_rule_javascript = {
    .language = SQ_LANGUAGE_JAVASCRIPT,
    .asserts = {{"assert.deepEqual(@C, @E);", "__sq_emit(@I, @C);", "__sq_emit(@I, @E);"}},
    .lines = {{"const assert = require('node:assert');", NULL, ""},
              {"function test() {", NULL, NULL},
              {"let candidate = @N;", NULL, ""},
              {"}", NULL, NULL},
              {"test();", NULL, NULL}},
    .quotes = "\"'`",
    .driver = sq__calls_driver_javascript,
};
