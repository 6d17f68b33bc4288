#!/bin/sh
# run.sh: builds the parsers' fuzz targets with clang's libFuzzer (plus ASan
# and UBSan, float-cast-overflow included, no recovery) and runs each for
# SQ_FUZZ_SECONDS (default 10) from its seed corpus (tests/fuzz/corpus/NAME):
#   reply_code, reply_risk  code and risk verdicts out of LLM replies
#   task                    the task parser and the producer's stamp
#   config                  the config loader and validation
# SQ_FUZZ_TARGETS picks some (default: all). Skips (77) when clang or its
# libFuzzer runtime is missing (scripts/install-deps.sh installs clang and
# libclang-rt-14-dev).
set -eu
: "${SQ_SRC:?}" "${SQ_BIN:?}"
secs=${SQ_FUZZ_SECONDS:-10}
targets=${SQ_FUZZ_TARGETS:-reply_code reply_risk task config}
CC=$(command -v clang-14 || command -v clang || true)
[ -n "$CC" ] || { echo "SKIP: clang is not installed" >&2; exit 77; }
out=$(mktemp -d /tmp/sandq-fuzz.XXXXXX)
trap 'rm -rf "$out"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$out/probe.c"
"$CC" -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" 2>/dev/null ||
  { echo "SKIP: clang has no libFuzzer runtime (libclang-rt-14-dev)" >&2; exit 77; }
C=$SQ_SRC/common
core="$C/core/errors.c $C/core/util.c $C/core/options.c $C/core/name.c $C/core/utf8.c"
# sq_core whole: the config pulls in the run's vocabulary, options, policy
# (the harness's Python is embedded at build time: its generated source is in the build tree)
core_all="$(ls "$C"/core/*.c "$C"/wire/*.c "$C"/precheck/*.c) $SQ_BIN/../common/harness_py.c"
bson_flags=$(pkg-config --cflags --libs libbson-1.0)
for t in $targets; do
  case $t in
  reply_code | reply_risk)
    src="$C/reply/reply.c $C/reply/reply_risk.c $core"; corpus=${t#reply_}; libs="-lcjson" ;;
  task)
    src="$C/wire/task.c $C/core/json_scan.c $core"; corpus=task; libs="-lcjson $bson_flags" ;;
  config)
    src=$core_all; corpus=config; libs="-lcjson -lm $bson_flags" ;;
  *) echo "FAIL: unknown fuzz target $t" >&2; exit 1 ;;
  esac
  # shellcheck disable=SC2086
  "$CC" -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined,float-cast-overflow -fno-sanitize-recover=all \
    -I"$C/core" -I"$C/wire" -I"$C/precheck" -I"$C/reply" "$SQ_SRC/tests/fuzz/fuzz_$t.c" $src $libs -lm \
    -o "$out/fuzz_$t"
  mkdir -p "$out/corpus_$t"
  cp "$SQ_SRC/tests/fuzz/corpus/$corpus/"* "$out/corpus_$t/"
  echo "fuzz_$t: ${secs}s"
  "$out/fuzz_$t" -max_total_time="$secs" -max_len=4096 -timeout=5 -rss_limit_mb=1024 \
    -artifact_prefix="$out/" "$out/corpus_$t" 2>"$out/$t.log" || {
    tail -40 "$out/$t.log" >&2
    for a in "$out"/crash-* "$out"/leak-* "$out"/timeout-*; do [ -f "$a" ] && od -c "$a" | head -20 >&2; done
    echo "FAIL: fuzz_$t found a problem" >&2
    exit 1
  }
  grep -E "^Done|stat::number_of_executed_units" "$out/$t.log" | tail -1 || true
done
