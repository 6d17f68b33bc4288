#!/bin/sh
# walls.sh: the dependency walls of common/CMakeLists.txt hold in the built
# binaries (docs/architecture.md, "Walls"):
#   - sandq-producer links neither libseccomp nor libcurl nor libcrypto, and
#     carries no symbol defined by the jail, the LLM client or the reply/risk
#     modules (it does link libmicrohttpd, through sq_http, for
#     `metrics --listen`);
#   - each library's archive needs nothing from a library it does not link
#     (sq_core needs nothing of sq_redis, sq_llm, sq_jail, sq_reply; those
#     need nothing of each other);
#   - library modules do not log: no object of sq_core (but log.c itself),
#     sq_reply, sq_redis, sq_llm or sq_http calls the logger; errors stay on the
#     handle or in an err buffer and the caller logs them once.
set -eu
: "${SQ_BIN:?}"
lib="$SQ_BIN/../common"
for a in core reply redis llm jail http; do
  [ -f "$lib/libsq_$a.a" ] || { echo "FAIL: $lib/libsq_$a.a is missing" >&2; exit 1; }
done
fail=0
prod="$SQ_BIN/sandq-producer"

# 1. What the producer's dynamic linker loads.
deps=$(ldd "$prod")
for bad in libseccomp libcurl libcrypto; do
  if printf '%s\n' "$deps" | grep -q "$bad"; then
    echo "FAIL: sandq-producer links $bad" >&2
    fail=1
  fi
done

# 2. Code: symbols defined in the walled-off libraries must not be in the producer.
defined() { nm --defined-only -g "$lib/libsq_$1.a" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDRB]/ {print $3}' | sort -u; }
undefined() { nm -u "$lib/libsq_$1.a" 2>/dev/null | awk '{print $NF}' | sort -u; }
nm --defined-only "$prod" | awk '{print $3}' | sort -u >/tmp/sq-walls-prod.$$
trap 'rm -f /tmp/sq-walls-*.$$' EXIT
for a in jail llm reply; do
  n=$(defined "$a" | wc -l)
  [ "$n" -gt 5 ] || { echo "FAIL: libsq_$a.a defines only $n symbols: nm could not read it" >&2; fail=1; }
  leak=$(defined "$a" | comm -12 - /tmp/sq-walls-prod.$$)
  if [ -n "$leak" ]; then
    echo "FAIL: sandq-producer carries code of sq_$a:" $leak >&2
    fail=1
  fi
done

# 3. Link walls between the libraries themselves.
check_needs() { # check_needs LIB OTHER...: LIB needs no symbol that an OTHER defines
  l=$1; shift
  # an archive nm cannot read gives empty lists, and an empty list proves nothing
  [ "$(undefined "$l" | wc -l)" -gt 5 ] || { echo "FAIL: nm -u of libsq_$l.a gave next to nothing" >&2; fail=1; }
  for o in "$@"; do
    # sq_http is small (four functions); the others define dozens
    least=5; [ "$o" = http ] && least=3
    [ "$(defined "$o" | wc -l)" -gt $least ] || { echo "FAIL: nm of libsq_$o.a gave next to nothing" >&2; fail=1; }
    hit=$(undefined "$l" | comm -12 - "$(defined "$o" >/tmp/sq-walls-def.$$; echo /tmp/sq-walls-def.$$)")
    if [ -n "$hit" ]; then
      echo "FAIL: sq_$l needs symbols of sq_$o, which it must not link:" $hit >&2
      fail=1
    fi
  done
}
check_needs core redis llm jail reply http
check_needs redis llm jail reply http
check_needs llm redis jail reply http
check_needs jail redis llm reply http
check_needs reply redis llm jail http
check_needs http redis llm jail reply

# 4. Library modules do not log (the jail, common/jail, is not checked yet).
for a in core reply redis llm http; do
  loggers=$(nm -A "$lib/libsq_$a.a" 2>/dev/null | awk '$2 == "U" && $3 == "sq_log_write" {print $1}' | sort -u)
  if [ -n "$loggers" ]; then
    echo "FAIL: these objects of sq_$a log (sq_log_write); keep the text on the handle:" $loggers >&2
    fail=1
  fi
done
# the check reads something: log.c's object defines the logger
nm -A "$lib/libsq_core.a" 2>/dev/null | awk '$2 == "T" && $3 == "sq_log_write" {f=1} END {exit !f}' ||
  { echo "FAIL: nm finds no sq_log_write in libsq_core.a: the check above reads nothing" >&2; fail=1; }

[ "$fail" -eq 0 ] || exit 1
size=$(stat -c %s "$prod")
echo "walls hold: sandq-producer is $size bytes and loads:" $(printf '%s\n' "$deps" | awk '{print $1}' | sed 's/\.so.*//')
