#!/bin/sh
# run.sh: builds the parsers' fuzz targets with clang's libFuzzer (plus ASan
# and UBSan, float-cast-overflow included, no recovery) and runs each for
# SQ_FUZZ_SECONDS (default 10) from its seed corpus (tests/fuzz/corpus/NAME):
#   extract_code, extract_risk  code and risk verdicts out of LLM replies
#   task                    the task parser and the producer's stamp
#   config                  the config loader and validation
#   import                  `import` over any dataset bytes, plain or gzip
#   result                  stored result documents read by the report
# SQ_FUZZ_TARGETS picks some (default: all). Skips (77) when clang or its
# libFuzzer runtime is missing (scripts/install-deps.sh installs clang and
# libclang-rt-14-dev).
set -eu
: "${SQ_SRC:?}" "${SQ_BIN:?}"
secs=${SQ_FUZZ_SECONDS:-10}
targets=${SQ_FUZZ_TARGETS:-extract_code extract_risk task config import result}
CC=$(command -v clang-14 || command -v clang || true)
[ -n "$CC" ] || { echo "SKIP: clang is not installed" >&2; exit 77; }
out=$(mktemp -d /tmp/sandq-fuzz.XXXXXX)
trap 'rm -rf "$out"' EXIT
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$out/probe.c"
"$CC" -fsanitize=fuzzer "$out/probe.c" -o "$out/probe" 2>/dev/null ||
  { echo "SKIP: clang has no libFuzzer runtime (libclang-rt-14-dev)" >&2; exit 77; }
C=$SQ_SRC/common
base="$C/base/errors.c $C/base/util.c $C/base/options.c $C/base/name.c $C/base/utf8.c"
# the config with what it links: the base and the pre-check
config_all="$(ls "$C"/base/*.c "$C"/precheck/*.c "$C"/config/*.c)"
bson_flags=$(pkg-config --cflags --libs libbson-1.0)
for t in $targets; do
  case $t in
  extract_code | extract_risk)
    src="$C/extract/extract.c $C/extract/extract_risk.c $base"; corpus=${t#extract_}; libs="-lcjson" ;;
  task)
    src="$C/formats/task.c $C/formats/language.c $C/base/json_scan.c $base"; corpus=task; libs="-lcjson $bson_flags" ;;
  config)
    src=$config_all; corpus=config; libs="-lcjson -lm $bson_flags" ;;
  import)
    src="$(ls "$SQ_SRC"/producer/import_*.c) $SQ_SRC/producer/prompt_template.c $C/formats/task.c $C/formats/language.c
      $config_all"; corpus=import; libs="-lcjson -lz -lm $bson_flags" ;;
  result)
    src="$SQ_SRC/producer/report_model.c $SQ_SRC/producer/report_cases.c $SQ_SRC/producer/report_json.c $SQ_SRC/producer/report_html.c
      $SQ_SRC/producer/stats.c $C/judge/reason.c $C/formats/status.c $(ls "$C"/base/*.c)"
    corpus=result; libs="-lcjson -lm $bson_flags" ;;
  *) echo "FAIL: unknown fuzz target $t" >&2; exit 1 ;;
  esac
  # shellcheck disable=SC2086
  "$CC" -g -O1 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined,float-cast-overflow -fno-sanitize-recover=all \
    -I"$C/base" -I"$C/formats" -I"$C/precheck" -I"$C/config" -I"$C/extract" \
    -I"$C/queue" -I"$C/fleet" -I"$C/judge" -I"$C/jail" -I"$SQ_SRC/producer" "$SQ_SRC/tests/fuzz/fuzz_$t.c" $src $libs -lm \
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
