#!/usr/bin/env bash
# bench/dataset_cache (a bench tool, built next to the CLI): the copy has the
# rewritten cache sizes and every record, the original is untouched, and bad
# input (a truncated file, a missing one, a bad size, no option) exits
# non-zero with a message naming it, writing nothing. A second.
set -u
convsel=${1:?usage: bench_dataset_cache.sh path/to/convsel}
source "$(dirname "${BASH_SOURCE[0]}")/shell_lib.sh"
tool="$(dirname "$convsel")/dataset_cache"
GEN="$(dirname "$convsel")/synthetic_dataset"
[ -x "$tool" ] || die "$tool not built"
[ -x "$GEN" ] || die "$GEN not built"
"$GEN" "$tmp/data.msgpack" 1 || die "cannot write the synthetic dataset"
cp "$tmp/data.msgpack" "$tmp/orig.msgpack"

"$tool" --l1d 65536 --l2 2097152 --l3 33554432 "$tmp/data.msgpack" "$tmp/copy.msgpack" >"$tmp/out" 2>"$tmp/err" \
    || fail "rewrite exited $?: $(cat "$tmp/err")"
grep -q "fingerprint.* rewritten" "$tmp/out" || fail "no report: $(cat "$tmp/out")"
cmp -s "$tmp/data.msgpack" "$tmp/orig.msgpack" || fail "the input was changed"
expect_rc 0 dataset info "$tmp/copy.msgpack"
n=$(grep -c "^  fingerprint" "$tmp/out")
[ "$n" -ge 1 ] || fail "the copy has no fingerprint: $(cat "$tmp/out")"
m=$(grep -c "L1d 64 KiB, L2 2 MiB, L3 32 MiB" "$tmp/out")
[ "$m" -eq "$n" ] || fail "$m of $n fingerprints rewritten: $(grep fingerprint "$tmp/out")"
copy_records=$(head -1 "$tmp/out" | grep -Eo '[0-9]+ records')
expect_rc 0 dataset info "$tmp/data.msgpack"
grep -q "L3 32 MiB" "$tmp/out" && fail "the synthetic data already says L3 32 MiB: the check proves nothing"
orig_records=$(head -1 "$tmp/out" | grep -Eo '[0-9]+ records')
[ -n "$orig_records" ] && [ "$copy_records" = "$orig_records" ] \
    || fail "the copy has $copy_records, the input $orig_records"

# bad input: non-zero, a message naming it, no output file
size=$(stat -c %s "$tmp/data.msgpack")
head -c $((size - 7)) "$tmp/data.msgpack" >"$tmp/cut.msgpack"
check_bad() { # rc pattern args...
    local want=$1 pattern=$2
    shift 2
    rm -f "$tmp/bad.msgpack"
    "$tool" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [ $rc -eq "$want" ] || fail "dataset_cache $* exited $rc, want $want"
    grep -q -- "$pattern" "$tmp/err" || fail "dataset_cache $*: no '$pattern' in: $(cat "$tmp/err")"
    [ -e "$tmp/bad.msgpack" ] && fail "dataset_cache $* wrote its output"
}
check_bad 1 "truncated record" --l3 1024 "$tmp/cut.msgpack" "$tmp/bad.msgpack"
check_bad 1 "$tmp/none.msgpack" --l3 1024 "$tmp/none.msgpack" "$tmp/bad.msgpack"
check_bad 2 "'abc'" --l3 abc "$tmp/data.msgpack" "$tmp/bad.msgpack"
check_bad 2 "nothing to change" "$tmp/data.msgpack" "$tmp/bad.msgpack"
check_bad 2 "needs IN and OUT" --l3 1024 "$tmp/data.msgpack"
finish bench_dataset_cache
