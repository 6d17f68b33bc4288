#!/bin/sh
# bench/large.sh BUILD_DIR: large batches of trivial tasks (`x = i * 2`,
# grouped into 1,000 problems by metadata.task_id, as samples of a model
# evaluation are) through two default workers and one real redis-server.
# For each size: tasks/s from push to the last result, the peak RSS of
# every producer command that reads or writes the whole batch, and Redis's
# used memory per task: while the tasks wait (pushed, no worker yet) and
# per stored result. The readers' RSS figures should be flat across the
# sizes (push keeps its ids, report --html a row per task: both grow).
# Sizes: SQ_BENCH_LARGE_SIZES (default "10000 100000"; `make bench-large`
# adds 1000000). Needs root (the workers' namespaces) and /usr/bin/time.
set -eu
. "$(dirname "$0")/lib/init.sh"
for need in "$SQ_BIN/sandq-worker" "$SQ_BIN/sandq-producer" /usr/bin/time; do
  [ -x "$need" ] || sq_fail "large.sh: $need is missing (make build; apt-get install time)"
done
[ "$(id -u)" -eq 0 ] || sq_fail "large.sh: run as root (the workers' warm pools need namespaces)"
SIZES=${SQ_BENCH_LARGE_SIZES:-10000 100000}
P=${SQ_BENCH_PRODUCER:-$SQ_BIN/sandq-producer} # another build's producer, to compare
sq_start_redis
unset SANDQ_LLM_BASE_URL
echo "$(date -u +%FT%TZ) $(nproc) cores, load $(bench_load), sizes: $SIZES"

used() { sq_redis_cli info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p'; }
# rss NAME CMD...: runs CMD, prints "NAME <peak RSS in KiB>", fails on a non-zero exit
rss() {
  name=$1; shift
  /usr/bin/time -f %M -o "$SQ_TMP/rss" "$@" >"$SQ_TMP/cmd.out" 2>"$SQ_TMP/cmd.err" ||
    { tail -5 "$SQ_TMP/cmd.err" >&2; sq_fail "$name failed"; }
  printf '%s %s\n' "$name" "$(tail -1 "$SQ_TMP/rss")"
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

wpids=""
start_workers() {
  for k in 1 2; do
    SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch-$k" "$SQ_BIN/sandq-worker" serve --worker-id "large-$k" >"$SQ_TMP/w$k.log" 2>&1 &
    wpids="$wpids $!"; SQ_PIDS="$SQ_PIDS $!"
  done
}
stop_workers() {
  [ -z "$wpids" ] || { kill -TERM $wpids; wait $wpids 2>/dev/null || true; }
  wpids=""
}

table=""
for n in $SIZES; do
  b="large-$n"
  awk -v n="$n" -v p="$b" 'BEGIN { for (i = 0; i < n; i++)
    printf "{\"id\":\"%s-%07d\",\"code\":\"x = %d * 2\",\"metadata\":{\"task_id\":\"p%04d\"}}\n", p, i, i, i % 1000 }' \
    >"$SQ_TMP/$b.jsonl"
  echo "== $n tasks (load $(bench_load))"
  sq_redis_cli flushall >/dev/null
  base=$(used)
  # The tasks waiting: pushed with no worker running, then dropped.
  rss push "$P" push --batch "$b-p" "$SQ_TMP/$b.jsonl" | tee "$SQ_TMP/push.rss"
  waiting=$(( ($(used) - base) / n ))
  sq_redis_cli flushall >/dev/null
  base=$(used)
  t0=$(date +%s.%N)
  start_workers
  rss "push --wait --out" "$P" push --batch "$b" --wait --timeout-s 7200 --out "$SQ_TMP/$b.w.bson" "$SQ_TMP/$b.jsonl" |
    tee "$SQ_TMP/pushwait.rss"
  t1=$(date +%s.%N)
  stop_workers
  grep -Eq "^ *ok +$n\$" "$SQ_TMP/cmd.out" || { tail -12 "$SQ_TMP/cmd.out" >&2; sq_fail "$b: not every task ended ok"; }
  rate=$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / (b - a) }')
  stored=$(( ($(used) - base) / n ))
  {
    rss "wait --out" "$P" wait "$b" --out "$SQ_TMP/$b.bson" --timeout-s 600
    rss "results bson" "$P" results "$b" --out "$SQ_TMP/$b.2.bson"
    rss "results jsonl" "$P" results "$b" --format jsonl --out "$SQ_TMP/$b.jsonl.out"
    rss "report --json" "$P" report "$b" --json
    rss "report --html" "$P" report "$b" --html "$SQ_TMP/$b.html"
  } | tee "$SQ_TMP/read.rss"
  lines=$(wc -l <"$SQ_TMP/$b.jsonl.out")
  [ "$lines" -eq "$n" ] || sq_fail "$b: results jsonl has $lines lines, not $n"
  cmp -s "$SQ_TMP/$b.bson" "$SQ_TMP/$b.2.bson" || sq_fail "$b: wait --out and results wrote different files"
  sq_redis_cli flushall >/dev/null
  echo "$n tasks: $rate tasks/s (push to the last result); redis $waiting bytes per waiting task, $stored per stored result"
  table="$table$n $rate $waiting $stored $(cat "$SQ_TMP"/push.rss "$SQ_TMP"/pushwait.rss "$SQ_TMP"/read.rss |
    awk '{ printf "%s ", $NF }')
"
  rm -f "$SQ_TMP/$b".*
done
echo "== peak RSS (MiB) by command and batch size"
printf '%-9s %7s %6s %6s %6s %6s %6s %6s %6s %6s %6s\n' tasks tasks/s B/wait B/res push push-w wait res.bs res.jl rep.js rep.ht
echo "$table" | awk 'NF { printf "%-9s %7s %6s %6s", $1, $2, $3, $4
  for (i = 5; i <= NF; i++) printf " %6.1f", $i / 1024; printf "\n" }'
# Flat: the largest size's peak within 8 MiB of the smallest's, command by
# command, for the commands that read the results (wait --out, results,
# report --json: columns 7-10). push keeps the ids it read (the duplicate
# check) and report --html a row per task (its table of every task): their
# growth is printed, not a target.
first=$(echo "$table" | awk 'NF { print; exit }'); last=$(echo "$table" | awk 'NF { l = $0 } END { print l }')
growth() { printf '%s\n%s\n' "$first" "$last" | awk -v from="$1" -v to="$2" 'NR == 1 { for (i = 5; i <= NF; i++) a[i] = $i }
  NR == 2 { w = 0; for (i = from; i <= to; i++) if ($i - a[i] > w) w = $i - a[i]; printf "%.1f", w / 1024 }'; }
worst=$(growth 7 10)
echo "growth of the peak RSS from the smallest to the largest batch: readers $worst MiB;" \
  "push $(growth 5 5) MiB, push --wait --out $(growth 6 6) MiB, report --html $(growth 11 11) MiB"
bench_target "peak RSS growth of wait --out, results, report --json, $(echo "$SIZES" | tr ' ' '/') tasks" "$worst MiB" \
  "<= 8 MiB" "$(awk -v w="$worst" 'BEGIN { print (w <= 8 ? "yes" : "no") }')" \
  "one HSCAN page (1,024 results) and the report's problems (1,000 here)"
