#!/bin/sh
# compare.sh: `report A B` compares two batches problem by problem. Two
# batches of code-only tasks (no LLM) with known outcomes, grouped into
# problems by metadata.task_id, through one real worker; `report A B --json`
# must give every problem's (n, c) in each batch, pass@k of each over the
# problems both have (exact binomials, computed here), the difference, an
# interval that holds the difference, and the problems solved by one only;
# the text and HTML forms say the same; bad operands are refused.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
sq_need_worker_host

# Problem i (natural names p1..p14) has 4 samples in A with (i mod 5) passing,
# and in B ((3i+1) mod 5) of 5; p13 only in A, p14 only in B.
$PY - "$SQ_TMP" <<'PY'
import json, sys
d = sys.argv[1]
ok = "def f():\n    return 1\n"
bad = "def f():\n    return 2\n"
tests = "assert f() == 1\n"
expect = {}
for name, samples, rule, skip in (("A", 4, lambda i: i % 5, 14), ("B", 5, lambda i: (i * 3 + 1) % 5, 13)):
    with open(f"{d}/{name}.jsonl", "w") as f:
        for i in range(1, 15):
            if i == skip:
                continue
            c = min(rule(i), samples)
            expect.setdefault(f"p{i}", {})[name.lower()] = {"n": samples, "c": c}
            for s in range(samples):
                f.write(json.dumps({"id": f"{name}-p{i}-{s}", "code": ok if s < c else bad, "tests": tests,
                                    "metadata": {"task_id": f"p{i}"}}) + "\n")
json.dump(expect, open(f"{d}/expect.json", "w"))
PY

sq_start_redis
unset SANDQ_LLM_BASE_URL
SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch" sq_bg w "$SQ_BIN/sandq-worker" serve --worker-id cmp
sq_wait_for "grep -q 'ready in' $SQ_TMP/w.log" 60 || { cat "$SQ_TMP/w.log" >&2; sq_fail "the worker never got ready"; }
"$P" push --batch cmpA --wait "$SQ_TMP/A.jsonl" >/dev/null 2>&1 || sq_fail "batch A did not finish"
"$P" push --batch cmpB --wait "$SQ_TMP/B.jsonl" >/dev/null 2>&1 || sq_fail "batch B did not finish"

"$P" report cmpA cmpB --json --k 1,3 >"$SQ_TMP/cmp.json" || sq_fail "report A B --json failed"
$PY - "$SQ_TMP/cmp.json" "$SQ_TMP/expect.json" <<'PY' || sq_fail "the comparison is wrong"
import json, math, sys
got = json.load(open(sys.argv[1]))
exp = json.load(open(sys.argv[2]))
assert got["schema"] == "sandq.compare/1", got["schema"]
assert got["batches"] == ["cmpA", "cmpB"], got["batches"]
names = [p["problem"] for p in got["problems"]]
assert names == [f"p{i}" for i in range(1, 15)], names  # natural order, each once
for p in got["problems"]:
    e = exp[p["problem"]]
    for side in "ab":
        want = e.get(side)
        assert p[side] == want, (p["problem"], side, p[side], want)
def pass_at_k(n, c, k):
    return 1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k)
both = [e for e in exp.values() if "a" in e and "b" in e]
assert got["common_problems"] == len(both) == 12
for k in (1, 3):
    g = got["pass_at_k"][str(k)]
    a = sum(pass_at_k(e["a"]["n"], e["a"]["c"], k) for e in both) / len(both)
    b = sum(pass_at_k(e["b"]["n"], e["b"]["c"], k) for e in both) / len(both)
    assert abs(g["a"] - a) < 1e-9 and abs(g["b"] - b) < 1e-9, (k, g, a, b)
    assert abs(g["delta"] - (b - a)) < 1e-9, (k, g["delta"], b - a)
    lo, hi = g["ci95"]
    assert lo <= g["delta"] <= hi and lo < hi, (k, g)
    assert g["problems"] == 12
only_a = sorted(n for n, e in exp.items() if "a" in e and "b" in e and e["a"]["c"] > 0 and e["b"]["c"] == 0)
only_b = sorted(n for n, e in exp.items() if "a" in e and "b" in e and e["b"]["c"] > 0 and e["a"]["c"] == 0)
assert sorted(got["only_a"]) == only_a and sorted(got["only_b"]) == only_b, (got["only_a"], got["only_b"], only_a, only_b)
assert only_a and only_b  # the data has both kinds
print("compare: %d problems, pass@1 %.4f -> %.4f, only A %s, only B %s" % (
    len(names), got["pass_at_k"]["1"]["a"], got["pass_at_k"]["1"]["b"], only_a, only_b))
PY

# The same numbers in the text and the page; the same interval every time.
"$P" report cmpA cmpB --k 1,3 --html "$SQ_TMP/cmp.html" >"$SQ_TMP/cmp.txt" 2>/dev/null || sq_fail "report A B (text, html) failed"
d1=$($PY -c 'import json,sys; g=json.load(open(sys.argv[1]))["pass_at_k"]["1"]; print("%+.4f  [%+.4f, %+.4f]" % (g["delta"], *g["ci95"]))' "$SQ_TMP/cmp.json")
grep -qF -- "$d1" "$SQ_TMP/cmp.txt" || { cat "$SQ_TMP/cmp.txt" >&2; sq_fail "the text does not show pass@1's difference $d1"; }
grep -q "only A" "$SQ_TMP/cmp.txt" || sq_fail "the text does not mark a problem solved only by A"
grep -q "<td>p14</td><td class=na>-</td>" "$SQ_TMP/cmp.html" || sq_fail "the page's grid lacks p14 (only in B)"
"$P" report cmpA cmpB --json --k 1,3 | cmp -s - "$SQ_TMP/cmp.json" || sq_fail "a second comparison differs from the first"

# One batch's page lists its first 100 failing tasks in natural order, then
# says how many more; with no LLM cost it shows no cost card.
$PY -c 'import json
for i in range(130): print(json.dumps({"id": "F-%d" % i, "code": "assert False"}))' >"$SQ_TMP/F.jsonl"
"$P" push --batch cmpF --wait "$SQ_TMP/F.jsonl" >/dev/null 2>&1 || sq_fail "batch F did not finish"
"$P" report cmpF --html "$SQ_TMP/F.html" >/dev/null 2>&1 || sq_fail "report cmpF --html failed"
$PY - "$SQ_TMP/F.html" <<'PY' || sq_fail "the failing tasks' table is not capped at 100 in natural order"
import re, sys
page = open(sys.argv[1]).read()
t = page[page.index("<h2>Failing tasks</h2>"):]
t = t[:t.index("</section>")]
ids = re.findall(r'<tr><td>(F-\d+)</td>', t)
assert ids == ["F-%d" % i for i in range(100)], ids[:12]
assert "30 more;" in t, "no count of the rest"
assert "LLM cost" not in page and "$0.0000" not in page, "a cost shown for a batch without LLM spend"
PY

# Bad operands: a usage error naming the problem, and an unknown batch.
"$P" report cmpA cmpB cmpA >/dev/null 2>"$SQ_TMP/e1" && sq_fail "three batches accepted"
grep -q "two to compare" "$SQ_TMP/e1" || { cat "$SQ_TMP/e1" >&2; sq_fail "three batches: no clear error"; }
"$P" report cmpA nosuch >/dev/null 2>"$SQ_TMP/e2" && sq_fail "an unknown batch compared"
grep -q "nosuch" "$SQ_TMP/e2" || { cat "$SQ_TMP/e2" >&2; sq_fail "the unknown batch is not named"; }
echo "compare: every problem, pass@k and the lists right; text, HTML and errors as documented"
