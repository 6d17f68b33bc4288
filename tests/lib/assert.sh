# assert.sh: the checks and waits the integration scripts share, sourced by
# env.sh (after sq_fail). A failed check shows what it looked at on stderr
# and ends the script through sq_fail; no helper changes the caller's set -e.
# Modelled on bubblewrap's tests/libtest-core.sh (assert_streq,
# assert_file_has_content, assert_not_file_has_content).
#
#   sq_run NAME CMD...                 CMD's stdout, stderr in $SQ_TMP/NAME.out, .err; its exit code in $rc
#   sq_assert_rc WANT NAME [WHAT]      $rc (of sq_run NAME) is WANT
#   sq_assert_eq GOT WANT WHAT         two strings are equal
#   sq_assert_has FILE TEXT [WHAT]     FILE holds TEXT (a fixed string, not a pattern)
#   sq_assert_not_has FILE TEXT [WHAT] FILE does not hold TEXT
#   sq_expect CODE TEXT CMD...         CMD exits CODE and its stderr holds TEXT ($SQ_TMP/out, $SQ_TMP/err)
#   sq_fail_later MESSAGE              a failed check that lets the script go on to the others: prints
#                                      "FAIL MESSAGE" (stdout), counts it in $SQ_FAILURES for the script's end
#   sq_wait_until SECONDS CMD...       runs CMD (a shell function too) until it succeeds: 0, or 1 when it never did
#   sq_wait_for 'SHELL CODE' [SECONDS] the same for a line of sh code (default 10 s)
#
# A relative FILE is one in $SQ_TMP (where sq_run writes); WHAT, when given,
# is the failure's message (else one naming FILE, or NAME, and the values).
# The waits poll every 0.1 s, SECONDS * 10 times: a busy machine, whose
# polls take longer, waits longer, never less.

# Runs CMD with its output in OUT and ERR, its exit code in $rc, set -e off
# while it runs and restored after.
sq__run_to() {
  sq__out=$1 sq__err=$2
  shift 2
  case $- in *e*) sq__had_e=1 ;; *) sq__had_e= ;; esac
  set +e
  "$@" >"$sq__out" 2>"$sq__err"
  rc=$?
  if [ -n "$sq__had_e" ]; then set -e; fi
  return 0
}

sq_run() {
  sq__name=$1
  shift
  sq__run_to "$SQ_TMP/$sq__name.out" "$SQ_TMP/$sq__name.err" "$@"
}

sq__file() { case $1 in /*) echo "$1" ;; *) echo "$SQ_TMP/$1" ;; esac; }

sq_assert_rc() {
  [ "$rc" = "$1" ] && return 0
  cat "$SQ_TMP/$2.out" "$SQ_TMP/$2.err" >&2
  sq_fail "${3:-$2}: exit code $rc, want $1"
}

sq_assert_eq() {
  [ "$1" = "$2" ] || sq_fail "$3: got '$1', want '$2'"
}

sq_assert_has() {
  sq__f=$(sq__file "$1")
  grep -qF -- "$2" "$sq__f" && return 0
  cat "$sq__f" >&2
  # shellcheck disable=SC2016 # the single quotes are the message's own
  sq_fail "${3:-$1 lacks '$2'}"
}

sq_assert_not_has() {
  sq__f=$(sq__file "$1")
  grep -qF -- "$2" "$sq__f" || return 0
  cat "$sq__f" >&2
  # shellcheck disable=SC2016 # the single quotes are the message's own
  sq_fail "${3:-$1 has '$2'}"
}

sq_expect() {
  sq__code=$1 sq__text=$2
  shift 2
  sq__run_to "$SQ_TMP/out" "$SQ_TMP/err" "$@"
  [ "$rc" -eq "$sq__code" ] || { cat "$SQ_TMP/err" >&2; sq_fail "'$*' exited $rc, want $sq__code"; }
  sq_assert_has err "$sq__text" "'$*': stderr lacks '$sq__text'"
}

SQ_FAILURES=0
sq_fail_later() {
  echo "FAIL $*"
  SQ_FAILURES=$((SQ_FAILURES + 1))
}

sq_wait_until() {
  sq__tries=$(($1 * 10))
  shift
  while ! "$@" >/dev/null 2>&1; do
    sq__tries=$((sq__tries - 1))
    [ "$sq__tries" -gt 0 ] || return 1
    sleep 0.1
  done
}

sq_wait_for() { sq_wait_until "${2:-10}" sh -c "$1"; }
