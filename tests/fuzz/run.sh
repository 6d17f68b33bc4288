#!/bin/sh
# run.sh: builds the reply-parser fuzz targets with clang's libFuzzer (plus
# ASan and UBSan) and runs each for SQ_FUZZ_SECONDS (default 10). Skips (77)
# when clang or its libFuzzer runtime is missing (scripts/install-deps.sh
# installs clang and libclang-rt-14-dev).
set -eu
: "${SQ_SRC:?}" "${SQ_BIN:?}"
secs=${SQ_FUZZ_SECONDS:-10}
CC=$(command -v clang-14 || command -v clang || true)
[ -n "$CC" ] || { echo "SKIP: clang is not installed" >&2; exit 77; }
out=$(mktemp -d /tmp/sandq-fuzz.XXXXXX)
trap 'rm -rf "$out"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$out/probe.c"
"$CC" -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" 2>/dev/null ||
  { echo "SKIP: clang has no libFuzzer runtime (libclang-rt-14-dev)" >&2; exit 77; }
src="$SQ_SRC/common/reply/reply.c $SQ_SRC/common/reply/reply_risk.c $SQ_SRC/common/core/util.c $SQ_SRC/common/core/errors.c $SQ_SRC/common/core/options.c"
for t in code risk; do
  # shellcheck disable=SC2086
  "$CC" -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$SQ_SRC/common/core" -I"$SQ_SRC/common/reply" "$SQ_SRC/tests/fuzz/fuzz_reply_$t.c" $src -lcjson -lm -o "$out/fuzz_$t"
  mkdir -p "$out/corpus_$t"
  cp "$SQ_SRC/tests/fuzz/corpus/$t/"* "$out/corpus_$t/"
  echo "fuzz_reply_$t: ${secs}s"
  "$out/fuzz_$t" -max_total_time="$secs" -max_len=4096 -timeout=5 -rss_limit_mb=1024 \
    -artifact_prefix="$out/" "$out/corpus_$t" 2>"$out/$t.log" || {
    tail -40 "$out/$t.log" >&2
    for a in "$out"/crash-* "$out"/leak-* "$out"/timeout-*; do [ -f "$a" ] && od -c "$a" | head -20 >&2; done
    echo "FAIL: fuzz_reply_$t found a problem" >&2
    exit 1
  }
  grep -E "^Done|stat::number_of_executed_units" "$out/$t.log" | tail -1 || true
done
