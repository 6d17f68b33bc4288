#!/bin/sh
# readme_docs.sh: the lists in README.md that the code also holds agree
# with it, so that none drifts: every command of sandq-producer and
# sandq-worker has a row in "Programs"; the import row names every dataset
# of producer/import_datasets.c and the docs/evaluation.md line lists their
# titles, no more; `ctest -L` names exactly the labels tests/CMakeLists.txt
# gives; every docs/*.md page is linked and every linked page exists.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
README="$SQ_SRC/README.md"
fails=0
bad() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# 1. One row per command, as --help lists them.
for prog in sandq-producer sandq-worker; do
  "$SQ_BIN/$prog" --help >"$SQ_TMP/help" 2>&1 || sq_fail "$prog --help exited non-zero"
  cmds=$(awk -v p="$prog" '{ for (i = 1; i < NF; i++) if ($i == p && $(i + 1) ~ /^[a-z]+$/) print $(i + 1) }' \
    "$SQ_TMP/help" | sort -u)
  [ -n "$cmds" ] || sq_fail "no command found in '$prog --help'"
  for c in $cmds; do
    grep -q "^| \`$prog $c[ \`]" "$README" || bad "README's Programs table has no row for '$prog $c'"
  done
done

# 2. The datasets: names in the import row, titles in the evaluation line.
DS="$SQ_SRC/producer/import_datasets.c"
names=$(grep -o '\.name = "[^"]*"\|PLUS("[^"]*"' "$DS" | sed 's/.*"\([^"]*\)"$/\1/' | sort -u)
titles=$(grep -o '\.title = "[^"]*"\|PLUS("[^"]*", "[^"]*"' "$DS" | sed 's/.*"\([^"]*\)"$/\1/' | sort -u)
[ "$(echo "$names" | wc -l)" -ge 2 ] || sq_fail "no dataset names found in $DS"
[ "$(echo "$names" | wc -l)" -eq "$(echo "$titles" | wc -l)" ] || sq_fail "$DS: names and titles do not pair up"
row=$(grep '^| `sandq-producer import ' "$README") || sq_fail "README has no import row"
ops=$(echo "$row" | sed 's/^| `sandq-producer import \([^ ]*\) .*/\1/' | sed 's/\\|/ /g' | tr ' ' '\n' | sort -u)
[ "$ops" = "$names" ] || bad "the import row names '$(echo $ops)', import_datasets.c '$(echo $names)'"
line=$(grep '^- \[docs/evaluation.md\]' "$README") || sq_fail "README does not link docs/evaluation.md"
listed=$(echo "$line" | sed 's/.*(\([^)]*\)).*/\1/' | tr ',' '\n' | sed 's/^ *//; s/ *$//' | sort -u)
[ "$listed" = "$titles" ] || bad "README lists the datasets '$(echo $listed)', import_datasets.c '$(echo $titles)'"

# 3. The labels of `ctest -L`.
labels=$(grep -o '^ *sq_\(unit_test\|script_test\|unit_group\)([a-z][a-z]*\|^ *sq__unit_add_test([a-z][a-z]*' \
  "$SQ_SRC/tests/CMakeLists.txt" | sed 's/.*(//' | sort -u)
said=$(tr '\n' ' ' <"$README" | grep -o 'runs one subsystem ([^)]*)' | sed 's/.*(//; s/)$//' | tr -d '`' | tr ',' '\n' |
  sed 's/^ *//; s/ *$//' | sort -u)
[ -n "$said" ] || sq_fail "README names no ctest labels ('runs one subsystem (...)')"
[ "$said" = "$labels" ] || bad "README names the labels '$(echo $said)', tests/CMakeLists.txt gives '$(echo $labels)'"

# 4. The documentation pages.
for f in "$SQ_SRC"/docs/*.md; do
  grep -q "](docs/$(basename "$f"))" "$README" || bad "README does not link docs/$(basename "$f")"
done
for p in $(grep -o '](docs/[^)]*)' "$README" | sed 's/^](//; s/)$//' | sort -u); do
  [ -e "$SQ_SRC/$p" ] || bad "README links $p, which does not exist"
done

[ "$fails" -eq 0 ] || sq_fail "$fails README list(s) disagree with the code"
echo "readme_docs: the README's commands, datasets, labels and pages match the code"
