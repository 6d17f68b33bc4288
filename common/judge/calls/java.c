/* java.c: Java's rule (calls.h): MultiPL-E's template, a "}" closing the
 * candidate's method, then in main() `assert(NAME(...) == expected);` for a
 * primitive result or `assert(NAME(...).equals(expected));`, then the
 * closing of main and of class Problem. The reference opens Problem itself,
 * with the imports its expected values use (org.javatuples is no standard
 * library: a Pair there does not compile). */
#include "calls_internal.h"

const sq_calls_rule sq__calls_rule_java = {
    .language = SQ_LANGUAGE_JAVA,
    .asserts = {{"assert(@C == @E);", "__Sq.emit(@I, @C);", "__Sq.emit(@I, @E);"},
                {"assert(@C.equals(@E));", "__Sq.emit(@I, @C);", "__Sq.emit(@I, @E);"}},
    .lines = {{"public static void main(String[] args) {", NULL, NULL},
              {"}", NULL, NULL}},
    .closers = {"}"},
    .quotes = "\"'",
    .driver = sq__calls_driver_java,
    .ref_head = "import java.util.*;\nimport java.math.*;\nimport java.util.stream.*;\nclass Problem {\n",
};
