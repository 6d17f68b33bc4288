#!/bin/sh
# walls.sh: the dependency walls of common/CMakeLists.txt hold, in the
# sources and in the built binaries (docs/architecture.md, "Walls"):
#   - every #include "X" of a module's folder names a header of its own
#     folder or of a library it links (the jail never sees task or result
#     formats; nothing below the config sees the config);
#   - sandq-producer links neither libseccomp nor libcurl nor libcrypto, and
#     carries no symbol defined by the jail, the LLM client, the extractors
#     or the risk module (it does link libmicrohttpd, through sq_http, for
#     `metrics --listen`);
#   - each library's archive needs nothing from a library it does not link;
#   - library modules do not log: no object of a library but the jail (and
#     base's log.c itself) calls the logger; errors stay on the handle or in
#     an err buffer and the caller logs them once.
set -eu
: "${SQ_BIN:?}"
lib="$SQ_BIN/../common"
# LIB: the libraries it may link (transitively), lowest first
deps_of() {
  case $1 in
  base) echo "" ;;
  precheck) echo "base" ;;
  formats) echo "base precheck" ;;
  judge) echo "base precheck formats" ;;
  config) echo "base precheck" ;;
  extract) echo "base" ;;
  risk) echo "base extract" ;;
  redis) echo "base precheck formats" ;;
  llm | jail | http) echo "base" ;;
  esac
}
libs="base precheck formats judge config extract risk redis llm jail http"
dirs_of() { case $1 in redis) echo "queue fleet" ;; *) echo "$1" ;; esac; }
for a in $libs; do
  [ -f "$lib/libsq_$a.a" ] || { echo "FAIL: $lib/libsq_$a.a is missing" >&2; exit 1; }
done
fail=0
prod="$SQ_BIN/sandq-producer"

# 0. Sources: what each folder's files include.
checked=0
for l in $libs; do
  allowed=""
  for d in $(dirs_of "$l"); do allowed="$allowed $SQ_SRC/common/$d"; done
  for dl in $(deps_of "$l"); do for d in $(dirs_of "$dl"); do allowed="$allowed $SQ_SRC/common/$d"; done; done
  for d in $(dirs_of "$l"); do
    for f in "$SQ_SRC/common/$d"/*.c "$SQ_SRC/common/$d"/*.h; do
      [ -f "$f" ] || continue
      for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        checked=$((checked + 1))
        found=0
        for dir in $allowed; do [ -f "$dir/$h" ] && found=1; done
        if [ $found -eq 0 ]; then
          echo "FAIL: ${f#"$SQ_SRC"/} includes \"$h\", which is not in its own folder nor in a library sq_$l links" >&2
          fail=1
        fi
      done
    done
  done
done
[ "$checked" -gt 100 ] || { echo "FAIL: the include check read only $checked includes" >&2; fail=1; }

# 1. What the producer's dynamic linker loads.
deps=$(ldd "$prod")
for bad in libseccomp libcurl libcrypto; do
  if printf '%s\n' "$deps" | grep -q "$bad"; then
    echo "FAIL: sandq-producer links $bad" >&2
    fail=1
  fi
done

# 2. Code: symbols defined in the walled-off libraries must not be in the producer.
# each archive's lists, read once
syms="$(mktemp -d /tmp/sq-walls.XXXXXX)"
trap 'rm -rf "$syms"' EXIT
for a in $libs; do
  nm --defined-only -g "$lib/libsq_$a.a" 2>/dev/null | awk 'NF == 3 && $2 ~ /[TDRB]/ {print $3}' | sort -u >"$syms/def.$a"
  nm -u "$lib/libsq_$a.a" 2>/dev/null | awk '{print $NF}' | sort -u >"$syms/undef.$a"
done
defined() { cat "$syms/def.$1"; }
undefined() { cat "$syms/undef.$1"; }
nm --defined-only "$prod" | awk '{print $3}' | sort -u >"$syms/prod"
for a in jail llm extract risk; do
  n=$(defined "$a" | wc -l)
  [ "$n" -gt 0 ] || { echo "FAIL: libsq_$a.a defines only $n symbols: nm could not read it" >&2; fail=1; }
  leak=$(defined "$a" | comm -12 - "$syms/prod")
  if [ -n "$leak" ]; then
    echo "FAIL: sandq-producer carries code of sq_$a:" $leak >&2
    fail=1
  fi
done

# 3. Link walls between the libraries themselves.
check_needs() { # check_needs LIB OTHER...: LIB needs no symbol that an OTHER defines
  l=$1; shift
  # an archive nm cannot read gives empty lists, and an empty list proves nothing
  [ "$(undefined "$l" | wc -l)" -gt 2 ] || { echo "FAIL: nm -u of libsq_$l.a gave next to nothing" >&2; fail=1; }
  for o in "$@"; do
    [ "$(defined "$o" | wc -l)" -gt 0 ] || { echo "FAIL: nm of libsq_$o.a gave nothing" >&2; fail=1; }
    hit=$(undefined "$l" | comm -12 - "$syms/def.$o")
    if [ -n "$hit" ]; then
      echo "FAIL: sq_$l needs symbols of sq_$o, which it must not link:" $hit >&2
      fail=1
    fi
  done
}
for l in $libs; do
  others=""
  for o in $libs; do
    [ "$o" = "$l" ] && continue
    case " $(deps_of "$l") " in *" $o "*) continue ;; esac
    others="$others $o"
  done
  # shellcheck disable=SC2086
  check_needs "$l" $others
done

# 4. Library modules do not log (the jail, common/jail, is not checked yet).
for a in base precheck formats judge config extract risk redis llm http; do
  loggers=$(nm -A "$lib/libsq_$a.a" 2>/dev/null | awk '$2 == "U" && $3 == "sq_log_write" {print $1}' | sort -u)
  if [ -n "$loggers" ]; then
    echo "FAIL: these objects of sq_$a log (sq_log_write); keep the text on the handle:" $loggers >&2
    fail=1
  fi
done
# the check reads something: log.c's object defines the logger
nm -A "$lib/libsq_base.a" 2>/dev/null | awk '$2 == "T" && $3 == "sq_log_write" {f=1} END {exit !f}' ||
  { echo "FAIL: nm finds no sq_log_write in libsq_base.a: the check above reads nothing" >&2; fail=1; }

[ "$fail" -eq 0 ] || exit 1
size=$(stat -c %s "$prod")
echo "walls hold: sandq-producer is $size bytes and loads:" $(printf '%s\n' "$deps" | awk '{print $1}' | sed 's/\.so.*//')
