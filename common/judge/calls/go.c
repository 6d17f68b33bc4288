/* go.c: Go's rule (calls.h): MultiPL-E's template, a `func TestX(t
 * *testing.T)` holding a table of `{ actual: candidate(...), expected: E },`
 * rows and a loop comparing fmt.Sprintf("%v") of both. The worker builds
 * `package main` (go_package_main), so the test function becomes init()
 * in the candidate's program (the engine adds an empty main() when the code
 * has none) and main() in the reference,
 * the table a block of calls and the loop empty blocks; the driver, after
 * the code, uses the prompt's "fmt" and "testing" imports (Go rejects an
 * unused one) and the reference's head imports the same two. */
#include "calls_internal.h"

const sq_calls_rule sq__calls_rule_go = {
    .language = SQ_LANGUAGE_GO,
    .asserts = {{"{ actual: @C, expected: @E },", "__sq_emit(@I, @C)", "__sq_emit(@I, @E)"}},
    .lines = {{"func Test@N(t *testing.T) {", "func init() {", "func main() {"},
              {"candidate := @N", NULL, ""},
              {"type test struct {", NULL, NULL},
              {"actual interface{}", NULL, NULL},
              {"expected interface{}", NULL, NULL},
              {"tests := []test{", "{", "{"},
              {"for i, tc := range tests {", "{", "{"},
              {"t.Run(fmt.Sprintf(\"test num % d\", i), func(t *testing.T) {", "{", "{"},
              {"if fmt.Sprintf(\"%v\", tc.actual) != fmt.Sprintf(\"%v\", tc.expected) {", "{", "{"},
              {"t.Errorf(\"expected '%s', got '%s'\", tc.expected, tc.actual)", "", ""},
              {"})", "}", "}"},
              {"}", NULL, NULL}},
    .quotes = "\"'`",
    .driver = sq__calls_driver_go,
    .ref_head = "package main\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\n",
    .go_package_main = true,
};
