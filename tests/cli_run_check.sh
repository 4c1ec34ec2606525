#!/usr/bin/env bash
# Real networks computed right: the shipped model's plans for five networks of
# ../shared/networks (at 1 and 2 threads, and at 1 thread without oneDNN, so
# that the own Winograd, direct and GEMM kernels carry them), each run once by
# `convsel run --check`, which compares every layer with the reference
# convolution and every tensor with what should have reached it (that the
# check fails where it should is tests/test_runner.c's). Timing-free. Exits
# 77 (skipped) without the network corpus ($CONVSEL_NETWORKS_CORPUS, else
# ../shared/networks).
# $1: the convsel binary.
set -u
convsel=${1:?usage: cli_run_check.sh path/to/convsel}
source "$(dirname "${BASH_SOURCE[0]}")/shell_lib.sh"
unset CONVSEL_ISA CONVSEL_MODEL

corpus=${CONVSEL_NETWORKS_CORPUS:-../shared/networks}
if [ ! -f "$corpus/resnet_50.txt" ]; then
    echo "skipped: no network corpus at $corpus"
    exit 77
fi

checked=0
for net in resnet_50 googlenet_v1 mobilenet ssd_mobilenet densnet; do
    for variant in t1 t2 t1-own; do
        threads=${variant:1:1}
        extra=()
        [ "$variant" = t1-own ] && extra=(--exclude onednn)
        plan="$tmp/$net.$variant.plan.json"
        expect_rc 0 select --net "$corpus/$net.txt" --mb 1 --threads "$threads" "${extra[@]}" --quiet -o "$plan"
        [ -s "$plan" ] || {
            fail "$net $variant: select wrote no plan"
            continue
        }
        expect_rc 0 run --net "$corpus/$net.txt" --plan "$plan" --check --max-time 0
        grep -q '^checked: every layer matches the reference' "$tmp/out" ||
            fail "$net $variant: run --check: $(cat "$tmp/out" "$tmp/err")"
        checked=$((checked + 1))
    done
done
[ "$checked" -eq 15 ] || fail "checked $checked plans, want 15"
finish cli_run_check
