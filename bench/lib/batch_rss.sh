# bench/lib/batch_rss.sh: sourced by bench/large.sh and bench/seeded.sh
# (after init.sh and sq_start_redis): a batch of trivial tasks, and the
# peak RSS of each producer command that reads a whole batch. $P is the
# producer to measure.

# used: Redis's used_memory in bytes.
used() { sq_redis_cli info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p'; }

# rss NAME CMD...: runs CMD, prints "NAME <peak RSS in KiB>", fails on a non-zero exit.
rss() {
  name=$1; shift
  /usr/bin/time -f %M -o "$SQ_TMP/rss" "$@" >"$SQ_TMP/cmd.out" 2>"$SQ_TMP/cmd.err" ||
    { tail -5 "$SQ_TMP/cmd.err" >&2; sq_fail "$name failed"; }
  printf '%s %s\n' "$name" "$(tail -1 "$SQ_TMP/rss")"
}

# make_tasks N BATCH FILE: N tasks `x = i * 2` with ids BATCH-<i>, in 1,000
# problems (metadata.task_id), as samples of a model evaluation are.
make_tasks() {
  awk -v n="$1" -v p="$2" 'BEGIN { for (i = 0; i < n; i++)
    printf "{\"id\":\"%s-%07d\",\"code\":\"x = %d * 2\",\"metadata\":{\"task_id\":\"p%04d\"}}\n", p, i, i, i % 1000 }' \
    >"$3"
}

# read_batch BATCH N: wait --out, results (BSON, JSON lines), report --json
# and report --html on the finished batch, their peaks into
# $SQ_TMP/read.rss (and stdout); fails unless results wrote N lines and
# wait --out and results the same file.
read_batch() {
  {
    rss "wait --out" "$P" wait "$1" --out "$SQ_TMP/$1.bson" --timeout-s 600
    rss "results bson" "$P" results "$1" --out "$SQ_TMP/$1.2.bson"
    rss "results jsonl" "$P" results "$1" --format jsonl --out "$SQ_TMP/$1.jsonl.out"
    rss "report --json" "$P" report "$1" --json
    rss "report --html" "$P" report "$1" --html "$SQ_TMP/$1.html"
  } | tee "$SQ_TMP/read.rss"
  lines=$(wc -l <"$SQ_TMP/$1.jsonl.out")
  [ "$lines" -eq "$2" ] || sq_fail "$1: results jsonl has $lines lines, not $2"
  cmp -s "$SQ_TMP/$1.bson" "$SQ_TMP/$1.2.bson" || sq_fail "$1: wait --out and results wrote different files"
}

# growth FIRST LAST FROM TO: the largest growth in MiB, LAST's fields FROM..TO
# over FIRST's (rows of KiB figures, whitespace-separated).
growth() {
  printf '%s\n%s\n' "$1" "$2" | awk -v from="$3" -v to="$4" 'NR == 1 { for (i = 4; i <= NF; i++) a[i] = $i }
    NR == 2 { w = 0; for (i = from; i <= to; i++) if ($i - a[i] > w) w = $i - a[i]; printf "%.1f", w / 1024 }'
}

# push_alone N BATCH: N tasks into $SQ_TMP/BATCH.jsonl, pushed as batch
# BATCH-p with no worker into an empty Redis: push's peak into
# $SQ_TMP/push.rss (and stdout), Redis bytes per waiting task into
# $waiting; then Redis emptied again and its used_memory into $base.
push_alone() {
  make_tasks "$1" "$2" "$SQ_TMP/$2.jsonl"
  echo "== $1 tasks (load $(bench_load))"
  sq_redis_cli flushall >/dev/null
  base=$(used)
  rss push "$P" push --batch "$2-p" "$SQ_TMP/$2.jsonl" | tee "$SQ_TMP/push.rss"
  waiting=$(( ($(used) - base) / $1 ))
  sq_redis_cli flushall >/dev/null
  base=$(used)
}

# need SCRIPT FILE...: fails naming the first FILE that is not executable.
need() {
  script=$1; shift
  for f in "$@"; do
    [ -x "$f" ] || sq_fail "$script: $f is missing (make build; apt-get install time)"
  done
}
