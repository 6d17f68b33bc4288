# bash.sh: the record writer for Bash's judge (calls.h). __sq_emit I VALUE
# writes VALUE (a command substitution's output, or the expected word) as
# one record: a JSON string, bytes as they are but `"`, `\` and those
# below 0x20 escaped. Bytes, not characters: LC_ALL=C for the function.
__sq_emit() {
  local LC_ALL=C
  local __sq_s="$2" __sq_b='\' __sq_q='"' __sq_h __sq_c __sq_k
  __sq_s="${__sq_s//"$__sq_b"/"$__sq_b$__sq_b"}"
  __sq_s="${__sq_s//"$__sq_q"/"$__sq_b$__sq_q"}"
  for ((__sq_k = 1; __sq_k < 32; __sq_k++)); do
    builtin printf -v __sq_h '%02x' "$__sq_k"
    builtin printf -v __sq_c "\\x$__sq_h"
    __sq_s="${__sq_s//"$__sq_c"/"${__sq_b}u00$__sq_h"}"
  done
  builtin printf '\036sandq-call %s "%s"\n' "$1" "$__sq_s"
}
