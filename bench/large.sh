#!/bin/sh
# bench/large.sh BUILD_DIR: large batches of trivial tasks (`x = i * 2`,
# grouped into 1,000 problems by metadata.task_id, as samples of a model
# evaluation are) through two default workers and one real redis-server.
# For each size: tasks/s from push to the last result, the peak RSS of
# every producer command that reads or writes the whole batch, and Redis's
# used memory per task: while the tasks wait (pushed, no worker yet) and
# per stored result. The readers' RSS should be flat across the sizes
# (push keeps a 64-bit hash per id: 10 bytes a task). bench/seeded.sh
# measures the same commands on results seeded without workers.
# Sizes: SQ_BENCH_LARGE_SIZES (default "10000 100000"; `make bench-large`
# adds 1000000). Needs root (the workers' namespaces) and /usr/bin/time.
set -eu
. "$(dirname "$0")/lib/init.sh"
. "$SQ_SRC/bench/lib/batch_rss.sh"
need large.sh "$SQ_BIN/sandq-worker" "$SQ_BIN/sandq-producer" /usr/bin/time
[ "$(id -u)" -eq 0 ] || sq_fail "large.sh: run as root (the workers' warm pools need namespaces)"
SIZES=${SQ_BENCH_LARGE_SIZES:-10000 100000}
P=${SQ_BENCH_PRODUCER:-$SQ_BIN/sandq-producer} # another build's producer, to compare
sq_start_redis
unset SANDQ_LLM_BASE_URL
echo "$(date -u +%FT%TZ) $(nproc) cores, load $(bench_load), sizes: $SIZES"


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
  push_alone "$n" "$b" # the tasks waiting: pushed with no worker running, then dropped
  t0=$(date +%s.%N)
  start_workers
  rss "push --wait --out" "$P" push --batch "$b" --wait --timeout-s 7200 --out "$SQ_TMP/$b.w.bson" "$SQ_TMP/$b.jsonl" |
    tee "$SQ_TMP/pushwait.rss"
  t1=$(date +%s.%N)
  stop_workers
  grep -Eq "^ *ok +$n\$" "$SQ_TMP/cmd.out" || { tail -12 "$SQ_TMP/cmd.out" >&2; sq_fail "$b: not every task ended ok"; }
  rate=$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / (b - a) }')
  stored=$(( ($(used) - base) / n ))
  read_batch "$b" "$n"
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
# command, for the commands that read the results (columns 7-11: wait
# --out, results, report --json and --html). push and push --wait --out
# keep a hash of each id (10 bytes a task): their growth is printed.
first=$(echo "$table" | awk 'NF { print; exit }'); last=$(echo "$table" | awk 'NF { l = $0 } END { print l }')
worst=$(growth "$first" "$last" 7 11)
echo "growth of the peak RSS from the smallest to the largest batch: readers $worst MiB;" \
  "push $(growth "$first" "$last" 5 5) MiB, push --wait --out $(growth "$first" "$last" 6 6) MiB (10 bytes a task)"
bench_target "peak RSS growth of wait --out, results, report --json/--html, $(echo "$SIZES" | tr ' ' '/') tasks" \
  "$worst MiB" "<= 8 MiB" "$(awk -v w="$worst" 'BEGIN { print (w <= 8 ? "yes" : "no") }')" \
  "one HSCAN page (1,024 results) and the report's problems (1,000 here)"
