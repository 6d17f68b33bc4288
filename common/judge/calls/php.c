/* php.c: PHP's rule (calls.h): MultiPL-E's template, a candidate()
 * wrapper and `if (candidate(...) !== expected) { throw new
 * Exception("Test failed!"); }` lines in test(). The code opens PHP mode
 * with `<?php`, so the driver comes last (its functions are hoisted) and
 * the reference opens its own. */
#include "calls_internal.h"

const sq_calls_rule sq__calls_rule_php = {
    .language = SQ_LANGUAGE_PHP,
    .asserts = {{"if (@C !== @E) { throw new Exception(\"Test failed!\"); }", "__sq_emit(@I, @C);",
                 "__sq_emit(@I, @E);"}},
    .lines = {{"function candidate(...$args) {", NULL, NULL},
              {"return @N(...$args);", NULL, ""},
              {"}", NULL, NULL},
              {"function test(): void {", NULL, NULL},
              {"test();", NULL, NULL}},
    .quotes = "\"'",
    .driver = sq__calls_driver_php,
    .ref_head = "<?php\n",
};
