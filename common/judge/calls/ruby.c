/* ruby.c: Ruby's rule (calls.h): MultiPL-E's template, a Test::Unit case
 * with `assert_equal(expected, candidate.call(...))` lines (expected
 * first). Test::Unit is not the standard library's: the class becomes a
 * plain one, its test method __sq_test, called by the tail. */
#include "calls_internal.h"

const sq_calls_rule sq__calls_rule_ruby = {
    .language = SQ_LANGUAGE_RUBY,
    .asserts = {{"assert_equal(@E, @C)", "__sq_emit(@I, @C)", "__sq_emit(@I, @E)"}},
    .lines = {{"require 'test/unit'", "", ""},
              {"class TestHumanEval < Test::Unit::TestCase", "class TestHumanEval", "class TestHumanEval"},
              {"def test_@N", "def __sq_test", "def __sq_test"},
              {"candidate = method(:@N)", NULL, ""},
              {"end", NULL, NULL}},
    .quotes = "\"'",
    .driver = sq__calls_driver_ruby,
    .driver_first = true,
    .cand_tail = "TestHumanEval.new.__sq_test\n",
    .ref_tail = "TestHumanEval.new.__sq_test\n",
};
