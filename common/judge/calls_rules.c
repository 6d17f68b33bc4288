/* calls_rules.c: each language's rule, by id (calls.h). The rules
 * themselves are in calls/<language>.c, their drivers in
 * drivers/<language>.<ext>. */
#include "calls.h"

#include "calls_internal.h"

const sq_calls_rule *sq_calls_rule_of(sq_language_id id) {
  switch (id) {
  case SQ_LANGUAGE_BASH: return &sq__calls_rule_bash;
  case SQ_LANGUAGE_JAVASCRIPT: return &sq__calls_rule_javascript;
  case SQ_LANGUAGE_TYPESCRIPT: return &sq__calls_rule_typescript;
  case SQ_LANGUAGE_C: return &sq__calls_rule_c;
  case SQ_LANGUAGE_CPP: return &sq__calls_rule_cpp;
  case SQ_LANGUAGE_GO: return &sq__calls_rule_go;
  case SQ_LANGUAGE_RUST: return &sq__calls_rule_rust;
  case SQ_LANGUAGE_JAVA: return &sq__calls_rule_java;
  case SQ_LANGUAGE_RUBY: return &sq__calls_rule_ruby;
  case SQ_LANGUAGE_PHP: return &sq__calls_rule_php;
  case SQ_LANGUAGE_LUA: return &sq__calls_rule_lua;
  case SQ_LANGUAGE_PERL: return &sq__calls_rule_perl;
  default: return NULL;
  }
}
