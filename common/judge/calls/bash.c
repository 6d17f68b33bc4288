/* bash.c: Bash's rule (calls.h): MultiPL-E's template, a "}" closing the
 * candidate's function, a candidate() wrapper, `set -e` and
 * `[[ $(candidate ARGS) = "expected" ]]` lines in run_test(). The value is
 * the command substitution's output, quoted so it is one word as in [[ ]];
 * `set -e` goes (the records, not the exit status, carry the verdict). */
#include "calls_internal.h"

const sq_calls_rule sq__calls_rule_bash = {
    .language = SQ_LANGUAGE_BASH,
    .asserts = {{"[[ $(candidate @C) = @E ]]", "__sq_emit @I \"$(candidate @C)\"", "__sq_emit @I @E"},
                {"[[ $(candidate) = @E ]]", "__sq_emit @I \"$(candidate)\"", "__sq_emit @I @E"}},
    .lines = {{"candidate() {", NULL, NULL},
              {"@N \"$@\"", NULL, NULL},
              {"}", NULL, NULL},
              {"set -e", "", ""},
              {"run_test() {", NULL, NULL},
              {"run_test", NULL, NULL}},
    .closers = {"}"},
    .quotes = "\"'",
    .driver = sq__calls_driver_bash,
    .driver_first = true,
};
