#!/bin/sh
# redis_auth.sh: Redis credentials as docs/deploy.md, "Redis authentication",
# promises them, against a real redis-server: the documented ACL line as
# written; a worker and the producer's commands as that user, with nothing
# denied and no key outside sq:* reachable; a missing password, a wrong one
# and a user lacking a permission fail fast with exit 2 and a named reason
# (never "Protocol error" or "unreachable"); rediss:// points to the docs;
# a password changed under a running worker makes it back off, not exit,
# and it carries on once the password works again.
set -eu
. "$SQ_SRC/tests/lib/env.sh"
sq_env_init
sq_start_redis
W="$SQ_BIN/sandq-worker" P="$SQ_BIN/sandq-producer"
export SANDQ_SCRATCH_ROOT="$SQ_TMP/scratch"
HP="127.0.0.1:$SQ_REDIS_PORT"

# expect CODE NEEDLE CMD...: exit CODE within 20 s, stderr (or stdout) holds NEEDLE.
expect() {
  code=$1 needle=$2; shift 2
  sq_run auth timeout 20 "$@"
  sq_assert_rc "$code" auth "'$*'"
  cat "$SQ_TMP/auth.out" >>"$SQ_TMP/auth.err"
  sq_assert_has auth.err "$needle" "'$*': output lacks '$needle'"
  ! grep -qiE "protocol error|unreachable" "$SQ_TMP/auth.err" || { cat "$SQ_TMP/auth.err" >&2; sq_fail "'$*' blames the network"; }
  ! grep -q "CHANGE-ME\|wrongpw" "$SQ_TMP/auth.err" || sq_fail "'$*' printed a password"
}

# 1. The documented ACL line, as written (redis-cli pointed at this Redis).
grep -E "^redis-cli ACL SETUSER sandq " "$SQ_SRC/docs/deploy.md" >"$SQ_TMP/acl.sh"
[ "$(wc -l <"$SQ_TMP/acl.sh")" -eq 1 ] || sq_fail "docs/deploy.md: the ACL SETUSER line was not found"
mkdir -p "$SQ_TMP/bin"
printf '#!/bin/sh\nexec %s -p %s "$@"\n' "$(command -v redis-cli)" "$SQ_REDIS_PORT" >"$SQ_TMP/bin/redis-cli"
chmod +x "$SQ_TMP/bin/redis-cli"
PATH="$SQ_TMP/bin:$PATH" sh -e "$SQ_TMP/acl.sh" | grep -q OK || sq_fail "the documented ACL line failed"
# the admin side gets a password; our own redis-cli calls use it from here on
sq_redis_cli ACL SETUSER default on '>adminpw' >/dev/null
admin() { redis-cli -p "$SQ_REDIS_PORT" --user default --pass adminpw --no-auth-warning "$@"; }
admin ACL LOG RESET >/dev/null
URL="redis://sandq:CHANGE-ME@$HP"
echo "redis_auth: the documented ACL user created"

# 2. A worker and the producer's commands as sandq: a batch runs, nothing denied.
sq_bg worker "$W" serve --redis "$URL" --worker-id auth-w1 --log-level info
sq_wait_for "grep -q 'serving queue' '$SQ_TMP/worker.log'" 30 || { cat "$SQ_TMP/worker.log" >&2; sq_fail "the worker did not serve as sandq"; }
printf '%s\n' '{"id":"a","code":"print(1)","expected_stdout":"1"}' '{"id":"b","code":"print(2)","expected_stdout":"2"}' >"$SQ_TMP/t.jsonl"
SANDQ_REDIS_URL="$URL" timeout 120 "$P" push --batch auth-1 --wait --out "$SQ_TMP/r.bson" "$SQ_TMP/t.jsonl" >"$SQ_TMP/push.out" 2>&1 ||
  { cat "$SQ_TMP/push.out" >&2; sq_fail "push --wait as sandq failed"; }
for cmd in "status auth-1" "dead list" "metrics" "health" "rollout status"; do
  set +e; SANDQ_REDIS_URL="$URL" timeout 30 "$P" $cmd >"$SQ_TMP/cmd.out" 2>&1; rc=$?; set -e
  [ $rc -le 1 ] || { cat "$SQ_TMP/cmd.out" >&2; sq_fail "'sandq-producer $cmd' as sandq exited $rc"; }
  ! grep -q NOPERM "$SQ_TMP/cmd.out" || { cat "$SQ_TMP/cmd.out" >&2; sq_fail "'sandq-producer $cmd' was denied a command"; }
done
# Only the optional persistence check (CONFIG GET, skipped when denied) may show.
denied=$(admin ACL LOG | grep -A1 -x object | grep -v -x -e object -e -- -e 'config|get' | sort -u | tr '\n' ' ')
[ -z "$denied" ] || { admin ACL LOG >&2; sq_fail "Redis denied the sandq user: $denied (ACL LOG above)"; }
out=$(redis-cli -p "$SQ_REDIS_PORT" --user sandq --pass CHANGE-ME --no-auth-warning SET other-key 1 2>&1)
echo "$out" | grep -q NOPERM || sq_fail "the sandq user could write a key outside sq:* ($out)"
out=$(redis-cli -p "$SQ_REDIS_PORT" --user sandq --pass CHANGE-ME --no-auth-warning FUNCTION FLUSH 2>&1)
echo "$out" | grep -q NOPERM || sq_fail "the sandq user could FUNCTION FLUSH ($out)"
echo "redis_auth: worker, push --wait, status, dead, metrics, health and rollout ran as sandq; nothing denied"

# 3. Start-up failures: named, exit 2, at once.
expect 2 "requires a password (NOAUTH" "$P" push --redis "redis://$HP" "$SQ_TMP/t.jsonl"
expect 2 "requires a password (NOAUTH" "$W" serve --redis "redis://$HP"
expect 2 "refused the password for user 'sandq' (WRONGPASS" "$P" status --redis "redis://sandq:wrongpw@$HP" auth-1
expect 2 "refused the password for user 'sandq'" "$W" serve --redis "redis://sandq:wrongpw@$HP"
expect 2 "refused the password for user 'sandq'" "$P" health --redis "redis://sandq:wrongpw@$HP"
expect 2 "refused the password for user 'default'" "$P" dead list --redis "redis://:wrongpw@$HP"
admin ACL SETUSER reader on '>readerpw' '~sq:*' -@all +@read +@connection >/dev/null
expect 2 "redis user 'reader' at $HP may not run FUNCTION LOAD (NOPERM" "$W" serve --redis "redis://reader:readerpw@$HP"
expect 2 "may not run FUNCTION LOAD" "$P" push --redis "redis://reader:readerpw@$HP" "$SQ_TMP/t.jsonl"
expect 2 "docs/deploy.md" "$P" push --redis "rediss://sandq:CHANGE-ME@$HP" "$SQ_TMP/t.jsonl"
expect 2 "docs/deploy.md" "$W" serve --redis "rediss://sandq:CHANGE-ME@$HP"
echo "redis_auth: a missing password, a wrong one, a user without FUNCTION LOAD and rediss:// fail fast (exit 2), named"

# 4. The password changes under the running worker: it backs off, naming
#    the reason, does not exit, and carries on once it works again.
admin ACL SETUSER sandq resetpass '>rotated' >/dev/null
admin CLIENT KILL USER sandq >/dev/null
printf '%s\n' '{"id":"c","code":"print(3)","expected_stdout":"3"}' >"$SQ_TMP/t2.jsonl"
SANDQ_REDIS_URL="redis://sandq:rotated@$HP" "$P" push --batch auth-2 "$SQ_TMP/t2.jsonl" >/dev/null
sq_wait_for "[ \$(grep -c 'refused the password' '$SQ_TMP/worker.log') -ge 3 ]" 30 ||
  { cat "$SQ_TMP/worker.log" >&2; sq_fail "the worker did not report the refused password, backing off"; }
kill -0 "$SQ_PID_worker" 2>/dev/null || { cat "$SQ_TMP/worker.log" >&2; sq_fail "the worker exited on a later auth failure"; }
grep "refused the password" "$SQ_TMP/worker.log" | grep -o 'in [0-9]* ms' | head -n 4 >"$SQ_TMP/delays"
[ "$(sort -n -k2 "$SQ_TMP/delays" | head -n 1)" = "$(head -n 1 "$SQ_TMP/delays")" ] && [ "$(sort -u "$SQ_TMP/delays" | wc -l)" -ge 2 ] ||
  { cat "$SQ_TMP/delays" >&2; sq_fail "the retries do not back off"; }
admin ACL SETUSER sandq resetpass '>CHANGE-ME' >/dev/null
SANDQ_REDIS_URL="$URL" timeout 120 "$P" status auth-2 >/dev/null 2>&1 || true
sq_wait_for "[ \"\$(redis-cli -p $SQ_REDIS_PORT --user default --pass adminpw --no-auth-warning HGET 'sq:{default}:batch:auth-2' done)\" = 1 ]" 90 ||
  { cat "$SQ_TMP/worker.log" >&2; sq_fail "the worker did not carry on once the password worked again"; }
grep -q "redis works again" "$SQ_TMP/worker.log" || sq_fail "no 'redis works again' line"
echo "redis_auth: a password changed under a running worker: backed off naming it, then carried on"
