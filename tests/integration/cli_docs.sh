#!/bin/sh
# cli_docs.sh: the command line as docs/configuration.md, "Command line",
# promises it, for sandq-producer, sandq-worker and sandq-fake-llm: every
# example of its flag table runs as written with the documented exit code;
# no program accepts a flag the table lacks, nor lacks one it lists;
# --help on every command exits 0, --version everywhere; options after
# operands and before the command; bad arguments are one line (no
# traceback); the fake LLM without --port prints usage.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
sq_start_redis
DOC="$SQ_SRC/docs/configuration.md"
export PATH="$SQ_BIN:$PATH" SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
mkdir -p "$SQ_TMP/run"
ln -s "$SQ_SRC/tests" "$SQ_TMP/run/tests"
cd "$SQ_TMP/run"
sq_bg worker sandq-worker serve --worker-id cli-w1 --log-level info
sq_wait_for "grep -q 'serving queue' '$SQ_TMP/worker.log'" 30 || true

# 1. The table: program, flag, example, exit.
awk -F'|' '/^## Command line/{on=1} /^### Exit codes/{on=0}
  on && /^\| (sandq-|all three)/ {
    ex=$4; gsub(/^ *`|` *$/, "", ex); code=$5; gsub(/ /, "", code)
    fl=$3; gsub(/^ *|  *$/, "", fl); print code "\t" fl "\t" ex }' "$DOC" >"$SQ_TMP/table"
[ "$(wc -l <"$SQ_TMP/table")" -ge 30 ] || { cat "$SQ_TMP/table" >&2; sq_fail "the flag table was not found in $DOC"; }
n=0
while IFS="$(printf '\t')" read -r code flag ex; do
  n=$((n + 1))
  first=$(echo "$flag" | grep -o -- '-[-a-z]*' | head -n 1)
  case " $ex " in *" $first "* | *" $first="*) ;; *) sq_fail "row $n: the example '$ex' does not use $first" ;; esac
  if [ "$code" = serves ]; then
    # The log starts empty here, in this shell: the background job's own
    # redirection would come too late, and the check below would read the
    # last row's "serving queue" and signal a shell that has not yet become
    # the server (its trap takes the SIGTERM, and exec forgets it).
    rm -f llm.port
    : >"$SQ_TMP/serves.log"
    case "$ex" in
      sandq-fake-llm*) ready="test -s '$SQ_TMP/run/llm.port'"; ex="$ex --port-file llm.port" ;;
      *) ready="grep -q 'serving queue' '$SQ_TMP/serves.log'" ;;
    esac
    (eval "exec $ex") >>"$SQ_TMP/serves.log" 2>&1 &
    pid=$!
    SQ_PIDS="$SQ_PIDS $pid"
    if ! sq_wait_for "$ready" 60; then
      kill -TERM $pid 2>/dev/null || true
      cat "$SQ_TMP/serves.log" >&2
      sq_fail "row $n: '$ex' did not come up"
    fi
    case "$ex" in sandq-fake-llm*)
      curl -sf "http://127.0.0.1:$(cat llm.port)/stats" >/dev/null || sq_fail "row $n: the fake LLM does not answer" ;;
    esac
    kill -TERM $pid
    # A server must stop on SIGTERM: give it 30 s (it finishes what it holds),
    # then fail naming it rather than hang until ctest's timeout.
    if ! sq_wait_for "! kill -0 $pid" 30; then
      tail -5 "$SQ_TMP/serves.log" >&2
      kill -KILL $pid 2>/dev/null || true
      sq_fail "row $n: '$ex' did not stop within 30 s of SIGTERM"
    fi
    set +e; wait $pid; rc=$?; set -e
    [ $rc -eq 0 ] || { cat "$SQ_TMP/serves.log" >&2; sq_fail "row $n: '$ex' exited $rc after SIGTERM, want 0"; }
  else
    sq_run row eval "$ex"
    sq_assert_rc "$code" row "row $n: '$ex'"
  fi
done <"$SQ_TMP/table"
[ -s results.bson ] || sq_fail "--out wrote nothing"
echo "cli_docs: all $n documented flag examples ran with their documented exit code"

# 2. The table and the programs' --help agree, flag for flag.
helpflags() { "$@" --help 2>&1 | grep -o -- '--[a-z][-a-z]*' ; }
for prog in sandq-producer sandq-worker sandq-fake-llm; do
  case $prog in
    sandq-producer) cmds="push status wait batches cancel dead metrics api health rollout audit results report import" ;;
    sandq-worker) cmds="serve run check" ;;
    *) cmds="-" ;;
  esac
  : >"$SQ_TMP/help.$prog"
  for c in $cmds; do
    if [ "$c" = - ]; then set -- $prog; else set -- $prog "$c"; fi
    set +e; "$@" --help >"$SQ_TMP/h.out" 2>&1; rc=$?; set -e
    [ $rc -eq 0 ] || sq_fail "'$* --help' exited $rc, want 0"
    grep -q "usage" "$SQ_TMP/h.out" || sq_fail "'$* --help' prints no usage"
    helpflags "$@" >>"$SQ_TMP/help.$prog"
    out=$("$@" --version) || sq_fail "'$* --version' failed"
    echo "$out" | grep -Eq "^$prog [0-9]+\.[0-9]+\.[0-9]+$" || sq_fail "'$* --version' printed '$out'"
  done
  sort -u "$SQ_TMP/help.$prog" | grep -vx -- '--help' | grep -vx -- '--version' >"$SQ_TMP/h.sorted"
  awk -F'\t' -v p="$prog" '$3 ~ "^"p" " {print $2}' "$SQ_TMP/table" | grep -o -- '--[a-z][-a-z]*' | grep -vx -e --help -e --version | sort -u >"$SQ_TMP/t.sorted"
  # the fake LLM's --help lists its own; the table names each once
  missing=$(comm -23 "$SQ_TMP/h.sorted" "$SQ_TMP/t.sorted" | tr '\n' ' ')
  extra=$(comm -13 "$SQ_TMP/h.sorted" "$SQ_TMP/t.sorted" | tr '\n' ' ')
  [ -z "$missing" ] || sq_fail "$prog accepts flags docs/configuration.md does not list: $missing"
  [ -z "$extra" ] || sq_fail "docs/configuration.md lists $prog flags its --help lacks: $extra"
done
for prog in sandq-producer sandq-worker; do
  "$prog" --help >"$SQ_TMP/h.out" 2>&1 || sq_fail "$prog --help exited non-zero"
  "$prog" --version | grep -Eq "^$prog [0-9]" || sq_fail "$prog --version"
done
echo "cli_docs: --help (exit 0) and --version on every command; the table lists exactly the flags the programs take"

# 3. Options after operands, and "-".
expect() { # expect CODE NEEDLE CMD...: exit CODE, stderr holds NEEDLE, no traceback
  sq_expect "$@"
  shift 2
  sq_assert_not_has err Traceback "'$*' printed a traceback"
}
sandq-producer dead list --redis "$SANDQ_REDIS_URL" --queue cli-q >/dev/null 2>&1 || sq_fail "dead list --redis URL (options after the operand)"
sandq-producer rollout status --config tests/data/cli-config.json >/dev/null || sq_fail "rollout status --config F"
sandq-producer status cli-b1 --queue default >/dev/null || sq_fail "status BATCH --queue"
sandq-producer --queue default --redis "$SANDQ_REDIS_URL" status cli-b1 >/dev/null || sq_fail "--queue Q --redis URL status BATCH (options before the command)"
sandq-worker --mode spawn run tests/data/cli-prog.py >/dev/null || sq_fail "--mode spawn run FILE (an option before the command)"
echo 'print("from stdin")' | sandq-worker run - --mode warm | grep -q '"stdout":"from stdin\\n"' || sq_fail "run - (stdin)"
expect 2 "unrecognized option '--frobnicate'" sandq-producer dead list --frobnicate
expect 2 "unrecognized option '--wait'" sandq-producer status b --wait
expect 2 "--format 'xml' must be bson, jsonl or csv" sandq-producer results cli-b1 --format xml
expect 2 "--k '0' must be up to" sandq-producer report cli-b1 --k 0
expect 2 "report takes one BATCH id, or two to compare them" sandq-producer report
expect 2 "--html needs a file name" sandq-producer report cli-b1 --html -
expect 2 "--batch needs a value" sandq-producer push tests/data/cli-tasks.jsonl --batch
expect 2 "--wait takes no value" sandq-producer push --wait=yes tests/data/cli-tasks.jsonl
expect 2 "unexpected argument 'extra'" sandq-worker check extra
expect 2 "unrecognized option '--frobnicate'" sandq-worker serve --frobnicate
echo "cli_docs: options after operands, - for stdin, bad options named in one line"

# 4. The fake LLM: usage without --port; one-line errors, no traceback.
expect 2 "usage: sandq-fake-llm" sandq-fake-llm
expect 2 "--port" sandq-fake-llm --port abc
expect 2 "--port 70000: must be 0-65535" sandq-fake-llm --port 70000
expect 2 "--replies $SQ_TMP/none.jsonl: No such file" sandq-fake-llm --port 0 --replies "$SQ_TMP/none.jsonl"
expect 2 "unrecognized arguments: --frob" sandq-fake-llm --port 0 --frob
busy=$SQ_REDIS_PORT
expect 1 "cannot listen on 127.0.0.1:$busy" sandq-fake-llm --port "$busy"
[ "$(wc -l <"$SQ_TMP/err")" -eq 1 ] || { cat "$SQ_TMP/err" >&2; sq_fail "a busy port is more than one line"; }
echo "cli_docs: sandq-fake-llm prints usage without --port; bad arguments, a missing file and a busy port are one line each"
