#!/bin/sh
# llm_client.sh: the LLM client (test_llm) against the fake LLM over real
# loopback HTTP, one reply rule per behaviour (tests/fake_llm/test-replies.jsonl).
# Also checks that the API key never reaches a log line.
set -u
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
[ -x "$SQ_BIN/test_llm" ] || sq_fail "$SQ_BIN/test_llm is not built"
sq_start_fake_llm "$SQ_SRC/tests/fake_llm/test-replies.jsonl"

rc=0
"$SQ_BIN/test_llm" 2>"$SQ_TMP/test_llm.log" || rc=$?
cat "$SQ_TMP/test_llm.log" >&2
if [ "$rc" -ne 0 ]; then
  echo "--- fake LLM log" >&2
  cat "$SQ_TMP/fake_llm.log" >&2
  exit "$rc"
fi
# The logs ran at DEBUG with retries: the key must appear in none of them.
if grep -q 'sk-test-123' "$SQ_TMP/test_llm.log" "$SQ_TMP/fake_llm.log"; then
  sq_fail "the API key appears in a log"
fi
grep -q 'retry 1/' "$SQ_TMP/test_llm.log" || sq_fail "no retry was logged"
exit 0
