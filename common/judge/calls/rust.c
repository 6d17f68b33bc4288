/* rust.c: Rust's rule (calls.h): MultiPL-E's template, a "}" closing the
 * candidate's function, then `assert_eq!(candidate(...), expected);` lines
 * in main(). The reference gets the candidate function's signature (a body
 * that never runs) and keeps `let candidate = NAME;`: the call, type-checked
 * in a branch never taken, gives a bare None or vec![] its type. */
#include "calls_internal.h"

const sq_calls_rule sq__calls_rule_rust = {
    .language = SQ_LANGUAGE_RUST,
    .asserts = {{"assert_eq!(@C, @E);", "crate::__sq_emit!(@I, @C);",
                 "crate::__sq_emit!(@I, if false { @C } else { @E });"}},
    .lines = {{"fn main() {", NULL, NULL},
              {"let candidate = @N;", NULL, NULL},
              {"}", NULL, NULL}},
    .closers = {"}"},
    .quotes = "\"",
    .driver = sq__calls_driver_rust,
    .rust_signature = true,
};
