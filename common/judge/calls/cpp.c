/* cpp.c: C++'s rule (calls.h): MultiPL-E's template, a "}" closing the
 * candidate's function, then `assert(candidate(...) == expected);` lines in
 * main(). The driver comes first: main() calls its template. */
#include "calls_internal.h"

const sq_calls_rule sq__calls_rule_cpp = {
    .language = SQ_LANGUAGE_CPP,
    .asserts = {{"assert(@C == @E);", "__sq_emit(@I, @C);", "__sq_emit(@I, @E);"}},
    .lines = {{"int main() {", NULL, NULL},
              {"int main(void) {", NULL, NULL},
              {"auto candidate = @N;", NULL, ""},
              {"return 0;", NULL, NULL},
              {"}", NULL, NULL}},
    .closers = {"}"},
    .quotes = "\"'",
    .driver = sq__calls_driver_cpp,
    .driver_first = true,
};
