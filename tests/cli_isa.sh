#!/usr/bin/env bash
# convsel --isa / CONVSEL_ISA: the option in either place, its errors, and the
# caps that oneDNN and OpenBLAS end up with (OpenBLAS needs the re-execution
# that convsel_isa_prepare_process does). $1: the convsel binary.
set -u
convsel=${1:?usage: cli_isa.sh path/to/convsel}
source "$(dirname "${BASH_SOURCE[0]}")/shell_lib.sh"
unset CONVSEL_ISA OPENBLAS_CORETYPE

"$convsel" --isa avx2 primitives >"$tmp/out" 2>"$tmp/err" || fail "--isa avx2 primitives exited $?: $(cat "$tmp/err")"
grep -q "^reference" "$tmp/out" || fail "--isa avx2 primitives lists nothing"
"$convsel" primitives --isa avx2 >"$tmp/out" 2>"$tmp/err" || fail "primitives --isa avx2 exited $?: $(cat "$tmp/err")"
grep -q "^reference" "$tmp/out" || fail "primitives --isa avx2 lists nothing"
"$convsel" primitives --isa=sse41 >/dev/null 2>&1 || fail "primitives --isa=sse41 exited $?"

"$convsel" --isa bogus primitives >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || fail "--isa bogus exited $rc, want 2"
grep -q "'bogus'" "$tmp/err" || fail "--isa bogus: message does not name 'bogus': $(cat "$tmp/err")"
CONVSEL_ISA=bogus "$convsel" primitives >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || fail "CONVSEL_ISA=bogus exited $rc, want 2"
grep -q "'bogus'" "$tmp/err" || fail "CONVSEL_ISA=bogus: message does not name 'bogus': $(cat "$tmp/err")"
"$convsel" primitives --isa >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || fail "--isa without a value exited $rc, want 2"

"$convsel" --version >"$tmp/out" 2>&1 || fail "--version exited $?"
for key in "isa:" "onednn isa:" "openblas core:"; do
    grep -q "^$key" "$tmp/out" || fail "--version has no '$key' line: $(cat "$tmp/out")"
done

# version_has ARGS... -- LINE: --version under ARGS prints LINE.
version_has() {
    local args=() line
    while [ "$1" != "--" ]; do args+=("$1"); shift; done
    line=$2
    "$convsel" "${args[@]}" --version >"$tmp/out" 2>&1 || fail "${args[*]} --version exited $?"
    grep -qix "$line" "$tmp/out" || fail "${args[*]} --version: no line '$line' in: $(tr '\n' '|' <"$tmp/out")"
}
version_has --isa sse41 -- "isa: sse41"
version_has --isa sse41 -- "onednn isa: sse41"
version_has --isa sse41 -- "openblas core: nehalem"
version_has --isa scalar -- "openblas core: nehalem"
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
    version_has --isa avx2 -- "isa: avx2"
    version_has --isa avx2 -- "onednn isa: avx2"
    version_has --isa avx2 -- "openblas core: haswell"
    version_has --isa=avx2 -- "openblas core: haswell"
    version_has --isa sse41 --isa avx2 -- "isa: avx2"
    CONVSEL_ISA=avx2 "$convsel" --version >"$tmp/out" 2>&1
    grep -qix "openblas core: haswell" "$tmp/out" || fail "CONVSEL_ISA=avx2: OpenBLAS not capped: $(tr '\n' '|' <"$tmp/out")"
fi
if grep -qw avx512f /proc/cpuinfo; then
    version_has --isa avx512 -- "isa: avx512"
    version_has --isa avx512 -- "openblas core: skylakex"
fi

# No cap: OpenBLAS keeps its own choice, unless it fell back to pre-AVX2
# kernels on an AVX2 CPU (OpenBLAS 0.3.21 on a Xeon it does not know: Prescott),
# which convsel replaces; a core the user sets stays.
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
    "$convsel" --version >"$tmp/out" 2>&1 || fail "--version exited $?"
    core=$(sed -n 's/^openblas core: //p' "$tmp/out")
    case ${core,,} in
    haswell | zen | skylakex | cooperlake | sapphirerapids) ;;
    *) fail "no cap on an AVX2 CPU: OpenBLAS runs '$core' kernels" ;;
    esac
    OPENBLAS_CORETYPE=Nehalem "$convsel" --version >"$tmp/out" 2>&1 || fail "--version exited $?"
    grep -qix "openblas core: nehalem" "$tmp/out" || fail "OPENBLAS_CORETYPE=Nehalem not kept: $(tr '\n' '|' <"$tmp/out")"

    # A core kept below this CPU's instruction set is said once, where
    # primitives are timed or chosen; not by commands that time nothing, not
    # for --help, and not under a cap (which sets the core to match itself).
    layer=mb1ic16ih8oc16oh8kh1ph0
    OPENBLAS_CORETYPE=Nehalem "$convsel" bench-layer $layer --primitives gemm_1x1 --max-time 0.05 >/dev/null 2>"$tmp/err" ||
        fail "OPENBLAS_CORETYPE=Nehalem bench-layer exited $?: $(cat "$tmp/err")"
    [ "$(grep -c "note: OPENBLAS_CORETYPE=Nehalem in the environment: OpenBLAS runs its sse41 kernels" "$tmp/err")" = 1 ] ||
        fail "OPENBLAS_CORETYPE=Nehalem bench-layer: not one note naming the core: $(cat "$tmp/err")"
    OPENBLAS_CORETYPE=Nehalem "$convsel" primitives >/dev/null 2>"$tmp/err" || fail "primitives exited $?"
    [ ! -s "$tmp/err" ] || fail "OPENBLAS_CORETYPE=Nehalem primitives: a note where nothing is timed: $(cat "$tmp/err")"
    OPENBLAS_CORETYPE=Nehalem "$convsel" bench-layer --help >/dev/null 2>"$tmp/err" || fail "bench-layer --help exited $?"
    [ ! -s "$tmp/err" ] || fail "OPENBLAS_CORETYPE=Nehalem bench-layer --help: a note: $(cat "$tmp/err")"
    OPENBLAS_CORETYPE=Nehalem "$convsel" --isa avx2 bench-layer $layer --primitives gemm_1x1 --max-time 0.05 >/dev/null 2>"$tmp/err" ||
        fail "--isa avx2 bench-layer exited $?: $(cat "$tmp/err")"
    ! grep -q "note: OPENBLAS_CORETYPE" "$tmp/err" || fail "--isa avx2: a note although the cap set the core: $(cat "$tmp/err")"
fi

finish cli_isa
