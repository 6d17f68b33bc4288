/* perl.c: Perl's rule (calls.h): MultiPL-E's template, Test::Deep's
 * `if(eq_deeply($candidate->(...),expected)) {` / `print "ok!" }else{` /
 * `exit 1;` / `}` in testhumaneval(). Test::Deep is not installed: its `use`
 * goes; the driver's __sq_emit returns true, so `exit 1` never runs. */
#include "calls_internal.h"

const sq_calls_rule sq__calls_rule_perl = {
    .language = SQ_LANGUAGE_PERL,
    .asserts = {{"if (eq_deeply(@C, @E)) {", "if(__sq_emit(@I, @C)) {", "if(__sq_emit(@I, @E)) {"}},
    .lines = {{"use Test::Deep;", "", ""},
              {"sub testhumaneval {", NULL, NULL},
              {"my $candidate = \\&@N;", NULL, ""},
              {"print \"ok!\" }else{", NULL, NULL},
              {"exit 1;", NULL, NULL},
              {"}", NULL, NULL},
              {"testhumaneval();", NULL, NULL}},
    .quotes = "\"'",
    .driver = sq__calls_driver_perl,
};
