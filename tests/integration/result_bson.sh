#!/bin/sh
# Decodes test_result's BSON with pymongo's bson module: an independent
# reader proves the documents are valid BSON with the documented fields.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
/usr/bin/python3 -c 'import bson' 2>/dev/null || sq_skip "python3-pymongo (bson module) is not installed"
"$SQ_BIN/test_result" "$SQ_TMP/r.bson"
/usr/bin/python3 - "$SQ_TMP/r.bson" <<'PY'
import sys, datetime, bson
docs = bson.decode_all(open(sys.argv[1], "rb").read())
assert len(docs) == 2, docs
d = docs[0]
assert d["_id"] == "t-1" and d["batch"] == "b-1" and d["status"] == "failed", d
assert d["exit_code"] == 97 and d["signal"] == 0
assert d["stdout"].startswith("ok \ufffd\ufffd bad utf8, a NUL:\ufffd:end"), repr(d["stdout"])
assert d["stdout_truncated"] is True and d["stderr_truncated"] is False
assert d["timings"] == {"queue_ms": 5, "llm_ms": 1200, "exec_ms": 30, "total_ms": 1240,
                        "all_attempts_ms": 13020}, d["timings"]
assert d["attempts"] == 3 and d["llm"]["temperature"] == 0.8, d
assert d["llm"]["provider"] == "fake" and d["llm"]["prompt_tokens"] == 10 and abs(d["llm"]["cost_usd"] - 0.0125) < 1e-12
assert d["metadata"] == {"expect": "failed", "n": [1, 2]}, d["metadata"]
assert isinstance(d["finished_at"], datetime.datetime)
assert d["jail"] == {"mode": "warm", "layers": ["pid_ns", "seccomp"], "oom_killed": True}, d["jail"]
assert int(d["finished_at"].replace(tzinfo=datetime.timezone.utc).timestamp() * 1000) == 1700000000123
e = docs[1]
assert e["status"] == "invalid_task" and e["exit_code"] is None and "llm" not in e and e["reason"]
print("pymongo decoded both documents")
PY
