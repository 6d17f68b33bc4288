#!/bin/sh
# bench/seeded.sh BUILD_DIR: the producer's memory at batch sizes real
# workers take hours to reach on a small machine. SEEDED, not run: per
# size, N results of trivial tasks (bench/large.sh's, 1,000 problems) are
# stored by bench/seed_results.c through the worker's own queue calls and
# result encoding (push, claim, complete; no LLM, no jail), into one real
# redis-server. Then, each under /usr/bin/time for its peak RSS: `push`
# alone of the N tasks (no worker), `wait --out`, `results` (BSON, JSON
# lines), `report --json` and `report --html`; and Redis's used memory per
# waiting task and per stored result. Sizes: SQ_BENCH_SEEDED_SIZES
# (default "10000 100000"; `make bench-large` adds 1000000). The target:
# each reader's peak grows by at most 8 MiB from the smallest size to the
# largest; push's growth (10 bytes a task) is printed.
set -eu
. "$(dirname "$0")/lib/init.sh"
. "$SQ_SRC/bench/lib/batch_rss.sh"
need seeded.sh "$SQ_BIN/seed_results" "$SQ_BIN/sandq-producer" /usr/bin/time
SIZES=${SQ_BENCH_SEEDED_SIZES:-10000 100000}
P=${SQ_BENCH_PRODUCER:-$SQ_BIN/sandq-producer} # another build's producer, to compare
sq_start_redis
echo "$(date -u +%FT%TZ) $(nproc) cores, load $(bench_load), sizes: $SIZES (seeded results)"

table=""
for n in $SIZES; do
  b="seeded-$n"
  push_alone "$n" "$b"
  t0=$(date +%s.%N)
  "$SQ_BIN/seed_results" "$SANDQ_REDIS_URL" default "$b" "$n" >/dev/null || sq_fail "seeding $b failed"
  t1=$(date +%s.%N)
  stored=$(( ($(used) - base) / n ))
  rate=$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / (b - a) }')
  read_batch "$b" "$n"
  sq_redis_cli flushall >/dev/null
  echo "$n results seeded at $rate/s; redis $waiting bytes per waiting task, $stored per stored result"
  table="$table$n $waiting $stored $(cat "$SQ_TMP"/push.rss "$SQ_TMP"/read.rss | awk '{ printf "%s ", $NF }')
"
  rm -f "$SQ_TMP/$b".*
done
echo "== peak RSS (MiB) by command and batch size (seeded results)"
printf '%-9s %6s %6s %6s %6s %6s %6s %6s %6s\n' tasks B/wait B/res push wait res.bs res.jl rep.js rep.ht
echo "$table" | awk 'NF { printf "%-9s %6s %6s", $1, $2, $3
  for (i = 4; i <= NF; i++) printf " %6.1f", $i / 1024; printf "\n" }'
first=$(echo "$table" | awk 'NF { print; exit }'); last=$(echo "$table" | awk 'NF { l = $0 } END { print l }')
worst=$(growth "$first" "$last" 5 9)
echo "growth of the peak RSS from the smallest to the largest batch: readers $worst MiB;" \
  "push $(growth "$first" "$last" 4 4) MiB (a hash of each id, 10 bytes a task)"
bench_target "peak RSS growth of wait --out, results, report --json/--html, $(echo "$SIZES" | tr ' ' '/') seeded results" \
  "$worst MiB" "<= 8 MiB" "$(awk -v w="$worst" 'BEGIN { print (w <= 8 ? "yes" : "no") }')" \
  "one HSCAN page (1,024 results) and the report's problems (1,000 here)"
