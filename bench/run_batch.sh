#!/usr/bin/env bash
# A batch proved without an oracle: `convsel select` for every network file into one plans
# directory, then `convsel run --plans DIR --baseline`, which times each plan beside oneDNN alone
# and ends with the median and geometric-mean speed-up (and both without the networks where
# oneDNN alone runs its reference loops). Minutes where compare_networks.sh takes hours, but no
# distance to the oracle.
#
#   bash bench/run_batch.sh [-t THREADS] [-m MODEL] [-x "SELECT OPTIONS"] [-o OUT.txt] [NETWORK_FILE...]
#
# Without networks: every file of ../shared/networks and networks/ (1D/3D layers skipped), at
# batch 1; networks/ files are linked as own_NAME.txt, since two resnet_50.txt would share a plan.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
threads=1
model=models/default.msgpack
select_opts=""
out=bench/results/run_batch.txt
while getopts "t:m:x:o:" opt; do
    case $opt in
    t) threads=$OPTARG ;;
    m) model=$OPTARG ;;
    x) select_opts=$OPTARG ;;
    o) out=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
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
# shellcheck disable=SC2086 # select_opts is a list of options
{
    echo "# bash bench/run_batch.sh -t $threads -m $model -x \"$select_opts\": $(cpu_setup "$convsel"), $(date -u +%F)"
    echo "# \$ convsel select --net NETS --mb 1 --threads $threads --model $model $select_opts -o PLANS --quiet"
    "$convsel" select --net "$work/nets" --mb 1 --threads "$threads" --model "$model" $select_opts -o "$work/plans" \
        --quiet 2>&1 || true
    echo
    echo "# \$ convsel run --net NETS --plans PLANS --baseline --model $model"
    start=$(date +%s)
    "$convsel" run --net "$work/nets" --plans "$work/plans" --baseline --model "$model" 2>&1 || true
    echo "# $(($(date +%s) - start)) s"
} | sed "s|$work/|TMP/|g" >"$out"
tail -4 "$out"
