/* c.c: C's rule (calls.h). MultiPL-E has no C; its C++ form is taken:
 * `assert(NAME(...) == expected);` lines in main(), a "}" first when the
 * code stops inside its function, `return 0;` at the end. The driver comes
 * first: main() calls its macro. */
#include "calls_internal.h"

const sq_calls_rule sq__calls_rule_c = {
    .language = SQ_LANGUAGE_C,
    .asserts = {{"assert(@C == @E);", "__sq_emit(@I, @C);", "__sq_emit(@I, @E);"}},
    .lines = {{"int main(void) {", NULL, NULL},
              {"int main() {", NULL, NULL},
              {"return 0;", NULL, NULL},
              {"}", NULL, NULL}},
    .closers = {"}"},
    .quotes = "\"'",
    .driver = sq__calls_driver_c,
    .driver_first = true,
};
