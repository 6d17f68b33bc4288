/* lua.c: Lua's rule (calls.h): MultiPL-E's template, luaunit's
 * `lu.assertEquals(candidate(...), expected)` lines in test_humaneval(),
 * run by `os.exit(lu.LuaUnit.run())`. luaunit is not installed: its require
 * goes and the function is called directly. */
#include "calls_internal.h"

const sq_calls_rule sq__calls_rule_lua = {
    .language = SQ_LANGUAGE_LUA,
    .asserts = {{"lu.assertEquals(@C, @E)", "__sq_emit(@I, @C)", "__sq_emit(@I, @E)"}},
    .lines = {{"lu = require('luaunit')", "", ""},
              {"function test_humaneval()", NULL, NULL},
              {"local candidate = @N", NULL, ""},
              {"end", NULL, NULL},
              {"os.exit(lu.LuaUnit.run())", "test_humaneval()", "test_humaneval()"}},
    .quotes = "\"'",
    .driver = sq__calls_driver_lua,
    .driver_first = true,
};
