#!/usr/bin/env bash
# A batch proved beside oneDNN alone: `convsel select` for every network file into one plans
# directory, then `convsel run --plans DIR --baseline`, which times each plan beside oneDNN alone
# and ends with the median and geometric-mean speed-up (and both without the networks where
# oneDNN alone runs its reference loops). Minutes where compare_networks.sh takes hours, but no
# distance to the oracle unless -m oracle (below) is one of the models. With -m repeated (up to 8
# models: the shipped one and its calibration to this CPU, say), each model's plans go to a
# directory of their own and `run` is given every directory, so a network's plans of all the
# models are timed interleaved with oneDNN alone (its boundary layout priced by the first model
# that is not the oracle), and the summary compares them. `-m oracle` stands
# for exhaustive profiling (`convsel select --oracle`, minutes a network, -x not given to it):
# `-m models/default.msgpack -m oracle` gives every network's distance from the model's plan to
# the oracle's, timed interleaved.
#
#   bash bench/run_batch.sh [-t THREADS] [-m MODEL]... [-x "SELECT OPTIONS"] [-o OUT.txt] [NETWORK_FILE...]
#
# Without networks: every file of ../shared/networks and networks/ (1D/3D layers skipped), at
# batch 1; networks/ files are linked as own_NAME.txt, since two resnet_50.txt would share a plan.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
threads=1
models=()
select_opts=""
out=bench/results/run_batch.txt
while getopts "t:m:x:o:" opt; do
    case $opt in
    t) threads=$OPTARG ;;
    m) models+=("$OPTARG") ;;
    x) select_opts=$OPTARG ;;
    o) out=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
((${#models[@]})) || models=(models/default.msgpack)
convsel=$(convsel_path)
require_built "$convsel"
make_tmp
work=$tmp
mkdir "$work/nets"
if (($# == 0)); then
    for f in ../shared/networks/*.txt; do ln -s "$(realpath "$f")" "$work/nets/"; done
    for f in networks/*.txt; do ln -s "$(realpath "$f")" "$work/nets/own_$(basename "$f")"; done
else
    for f in "$@"; do ln -s "$(realpath "$f")" "$work/nets/"; done
fi
# With one model the plans are in TMP/plans, as before; with more, TMP/plans_1, TMP/plans_2, ...
dirs=()
for i in "${!models[@]}"; do
    if ((${#models[@]} == 1)); then dirs+=("$work/plans"); else dirs+=("$work/plans_$((i + 1))"); fi
done
plans_args=()
for d in "${dirs[@]}"; do plans_args+=(--plans "$d"); done
# oneDNN alone's boundary layout is priced by the first model that is not the oracle.
pricing=models/default.msgpack
for m in "${models[@]}"; do
    if [ "$m" != oracle ]; then
        pricing=$m
        break
    fi
done
# shellcheck disable=SC2086 # select_opts and how are lists of options
{
    echo "# bash bench/run_batch.sh -t $threads$(printf -- ' -m %s' "${models[@]}") -x \"$select_opts\": $(cpu_setup "$convsel"), $(date -u +%F)"
    for i in "${!models[@]}"; do
        if [ "${models[$i]}" = oracle ]; then
            how="--oracle"
        else
            how="--model ${models[$i]} $select_opts"
        fi
        echo "# \$ convsel select --net NETS --mb 1 --threads $threads $how -o ${dirs[$i]} --quiet"
        start=$(date +%s)
        "$convsel" select --net "$work/nets" --mb 1 --threads "$threads" $how -o "${dirs[$i]}" --quiet 2>&1 || true
        echo "# $(($(date +%s) - start)) s"
    done
    echo
    echo "# \$ convsel run --net NETS ${plans_args[*]} --baseline --model $pricing"
    start=$(date +%s)
    "$convsel" run --net "$work/nets" "${plans_args[@]}" --baseline --model "$pricing" 2>&1 || true
    echo "# $(($(date +%s) - start)) s"
} | sed "s|$work/|TMP/|g" >"$out"
tail -n $((5 + 2 * ${#models[@]})) "$out"
