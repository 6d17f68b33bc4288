#!/bin/sh
# report_html.sh: `sandq-producer report --html` renders. A batch with every
# kind of ending (sampled HumanEval through the fake LLM, with prices; and
# tasks that fail, raise, time out, run out of memory or output, or are
# blocked) is reported as HTML; the page must be self-contained (no scripts,
# nothing fetched), and headless Chromium must draw its four plots: each SVG
# laid out at a non-zero size with non-empty shapes inside, and a screenshot
# that is not blank. SANDQ_SCREENSHOT_OUT=FILE keeps the screenshot
# (docs/evaluation-report.png is made so). The samples are asked through a
# --prompt-template, and the workers keep the LLM's replies
# (store_llm_reply): a failing sample's result holds its reply, and the
# page shows it under the task.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
. "$SQ_SRC/tests/lib/queue_env.sh"
data=${SANDQ_HUMANEVAL:-${SANDQ_DATA_DIR:+$SANDQ_DATA_DIR/HumanEval.jsonl.gz}}
[ -n "$data" ] && [ -r "$data" ] || sq_skip "HumanEval data not found (SANDQ_DATA_DIR or SANDQ_HUMANEVAL)"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || sq_skip "chromium is not installed (scripts/install-deps.sh installs it for make test)"
PY=/usr/bin/python3
sq_env_init
P=$SQ_BIN/sandq-producer

# 30 problems x 5 samples: (i mod 6) right replies of five
printf 'Implement {entry_point} ({task_id}) in one ```python block.\n\n{prompt}' >"$SQ_TMP/prompt.txt"
"$P" import humaneval "$data" --samples 5 --temperature 0.8 --prompt-template "$SQ_TMP/prompt.txt" 2>/dev/null |
  head -150 >"$SQ_TMP/tasks.jsonl"
head -1 "$SQ_TMP/tasks.jsonl" | grep -qF '"prompt":"Implement has_close_elements (HumanEval/0) in one ```python block.\n\nfrom typing' ||
  sq_fail "the template did not make the prompt: $(head -c 300 "$SQ_TMP/tasks.jsonl")"
$PY - "$data" "$SQ_TMP/replies.jsonl" <<'PY'
import gzip, json, sys
with open(sys.argv[2], "w") as f:
    for i, line in enumerate(gzip.open(sys.argv[1], "rt")):
        p = json.loads(line)
        right = "```python\n" + p["prompt"] + p["canonical_solution"] + "\n```\n"
        wrong = "```python\n" + p["prompt"] + "    return None\n```\n"
        c = i % 6
        f.write(json.dumps({"match": p["prompt"], "kind": "code", "contents": [right] * c + [wrong] * (5 - c)}) + "\n")
PY
cat >>"$SQ_TMP/tasks.jsonl" <<'T'
{"id": "fizz-stdout", "code": "for i in range(1, 6): print('Fizz' if i % 3 == 0 else i)", "expected_stdout": "1\n2\nFizz\n5\n"}
{"id": "raises", "code": "def f(x):\n    return 1 / x\nf(0)\n"}
{"id": "sleeps", "code": "import time\ntime.sleep(30)\n", "limits": {"wall_ms": 800}}
{"id": "hungry", "code": "x = bytearray(1 << 34)\n", "limits": {"memory_mib": 128}}
{"id": "chatty", "code": "while True: print('x' * 1000)\n", "limits": {"output_kib": 16}}
{"id": "shell", "code": "import os\nos.system('true')\n"}
{"id": "hello", "code": "print('hello')\n"}
T
sq_start_redis
sq_start_fake_llm "$SQ_TMP/replies.jsonl"
cat >"$SQ_TMP/worker.json" <<JSON
{"providers": [{"name": "fake", "base_url": "$SANDQ_LLM_BASE_URL", "model": "fake-coder",
  "price_in_usd_per_mtok": 3.0, "price_out_usd_per_mtok": 15.0, "max_in_flight": 64}],
 "scratch_root": "$SQ_TMP/scratch", "store_llm_reply": true}
JSON
unset SANDQ_LLM_BASE_URL
sq_bg w1 "$SQ_BIN/sandq-worker" serve --config "$SQ_TMP/worker.json" --worker-id html-1
sq_push_wait nightly-eval "$SQ_TMP/push.out" "$SQ_TMP/tasks.jsonl" ||
  { cat "$SQ_TMP/push.out"; sq_fail "the batch did not finish"; }
"$P" report nightly-eval --k 1,2,5 --html "$SQ_TMP/report.html" >"$SQ_TMP/report.txt"

# Self-contained: no script, no stylesheet or image link, no URL but the SVG namespace.
if grep -Eio '<script|<link|<img|<iframe|@import|url\(|src=|href=' "$SQ_TMP/report.html" | head -3 | grep .; then
  sq_fail "the report refers to outside assets or holds a script"
fi
if grep -Eo 'https?://[^"]*' "$SQ_TMP/report.html" | grep -v '^http://www.w3.org/2000/svg$' | head -3 | grep .; then
  sq_fail "the report holds a URL"
fi
[ "$(grep -o '<svg ' "$SQ_TMP/report.html" | wc -l)" -eq 4 ] || sq_fail "the report should hold 4 plots"

# The header says what was run; every problem is listed in natural order
# (HumanEval/2 before HumanEval/10) and again lowest pass rate first; the
# text names the problems that passed least.
for want in "sandq " "dataset humaneval" "model fake-coder" "temperature 0.8" " UTC"; do
  grep -qF "$want" "$SQ_TMP/report.html" || sq_fail "the page's header lacks '$want'"
  grep -qF "$want" "$SQ_TMP/report.txt" || sq_fail "the text's header lacks '$want'"
done
$PY - "$SQ_TMP/report.html" "$SQ_TMP/report.txt" <<'PY' || sq_fail "the problems' tables are wrong"
import re, sys
page, text = open(sys.argv[1]).read(), open(sys.argv[2]).read()
def names(cls):
    t = re.search(r'<table class="compact %s">(.*?)</table>' % cls, page, re.S).group(1)
    return re.findall(r'<tr><td>([^<]*)</td>', t)
by_name, by_rate = names("byname"), names("byrate")
he = [n for n in by_name if n.startswith("HumanEval/")]
assert he == ["HumanEval/%d" % i for i in range(30)], he[:12]
assert sorted(by_name) == sorted(by_rate) and len(by_name) == 37, (len(by_name), len(by_rate))
# problem i has (i mod 6) of 5 right: the first by rate are the ones with none right
assert by_rate[0] == "HumanEval/0" and "HumanEval/6" in by_rate[:12], by_rate[:12]
assert "problems, lowest pass rate first" in text and "... and 27 more" in text, text
PY

# The replies kept: HumanEval/0's samples all got the wrong program; its
# result holds the reply as the LLM gave it, and the page shows it, folded,
# under the failing task (and none under a task that came with its code).
"$P" results nightly-eval --format jsonl >"$SQ_TMP/results.jsonl"
$PY - "$data" "$SQ_TMP/results.jsonl" "$SQ_TMP/report.html" <<'PY' || sq_fail "the LLM replies were not kept or shown"
import gzip, html, json, re, sys
p0 = json.loads(gzip.open(sys.argv[1], "rt").readline())
wrong = "```python\n" + p0["prompt"] + "    return None\n```\n"
res = {r["_id"]: r for r in map(json.loads, open(sys.argv[2]))}
r = res["HumanEval/0/0"]
assert r["status"] == "failed" and r["llm"]["reply"] == wrong and r["llm"]["reply_truncated"] is False, r["llm"]
assert "reply" not in res["raises"].get("llm", {}), res["raises"]
page = open(sys.argv[3]).read()
row = re.search(r"<tr><td>HumanEval/0/0</td>.*?</tr>", page, re.S).group(0)
assert "<details><summary>LLM reply</summary><code>" + html.escape(wrong, quote=False) in row.replace("&#39;", "'").replace("&quot;", '"'), row[:600]
assert "<details>" not in re.search(r"<tr><td>raises</td>.*?</tr>", page, re.S).group(0)
PY

# Render it. A copy gets a probe that writes each SVG's laid-out size and
# its count of drawn shapes into the DOM, which --dump-dom then prints.
sed 's|</body>|<script>const o = document.getElementById("ord-rate"); const before = getComputedStyle(document.querySelector("table.byrate")).display; o.checked = true; document.body.setAttribute("data-toggle", before + " " + getComputedStyle(document.querySelector("table.byrate")).display + " " + getComputedStyle(document.querySelector("table.byname")).display); for (const s of document.querySelectorAll("svg")) { const r = s.getBoundingClientRect(); let n = 0; for (const e of s.querySelectorAll("rect")) { const b = e.getBoundingClientRect(); if (b.width > 0 \&\& b.height > 0) n++; } s.setAttribute("data-probe", Math.round(r.width) + " " + Math.round(r.height) + " " + n); }</script></body>|' \
  "$SQ_TMP/report.html" >"$SQ_TMP/probe.html"
chrome() { # chrome ARGS...: a fresh profile each time, nothing from the network
  rm -rf "$SQ_TMP/profile"; mkdir -p "$SQ_TMP/profile"
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$SQ_TMP/profile" "$@" 2>>"$SQ_TMP/chromium.log"
}
chrome --dump-dom "file://$SQ_TMP/probe.html" >"$SQ_TMP/dom.html" || { tail -20 "$SQ_TMP/chromium.log"; sq_fail "chromium --dump-dom failed"; }
chrome --window-size=1280,1500 --screenshot="$SQ_TMP/shot.png" "file://$SQ_TMP/report.html" >/dev/null ||
  { tail -20 "$SQ_TMP/chromium.log"; sq_fail "chromium --screenshot failed"; }
$PY - "$SQ_TMP/dom.html" "$SQ_TMP/shot.png" <<'PY'
import re, struct, sys, zlib
dom = open(sys.argv[1]).read()
# the second order shows only once its radio button is checked, by CSS alone
assert 'data-toggle="none table none"' in dom, re.findall(r'data-toggle="[^"]*"', dom)
probes = re.findall(r'data-probe="(\d+) (\d+) (\d+)"', dom)
assert len(probes) == 4, ("svg elements laid out", probes)
for (w, h, n), name in zip(probes, ("statuses", "pass@k", "latency", "cost")):
    assert int(w) > 100 and int(h) >= 20 and int(n) >= 1, (name, w, h, n)
assert int(probes[0][2]) >= 8, ("one bar per status", probes[0])

def pixels(path):  # a minimal PNG reader: 8-bit RGB or RGBA, non-interlaced
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows

w, h, bpp, rows = pixels(sys.argv[2])
colors, ink = set(), 0
for y in range(0, h, 3):
    r = rows[y]
    for x in range(0, w, 3):
        px = r[x * bpp:x * bpp + 3]
        colors.add(px)
        ink += px != b"\xff\xff\xff"
total = len(range(0, h, 3)) * len(range(0, w, 3))
assert len(colors) > 20 and ink > total // 50, ("blank screenshot", len(colors), ink, total)
print("report_html: 4 plots drawn (%s); screenshot %dx%d, %d colours, %.1f%% ink"
      % (", ".join("%sx%s/%s" % p for p in probes), w, h, len(colors), 100.0 * ink / total))
PY
if [ -n "${SANDQ_SCREENSHOT_OUT:-}" ]; then cp "$SQ_TMP/shot.png" "$SANDQ_SCREENSHOT_OUT"; fi
