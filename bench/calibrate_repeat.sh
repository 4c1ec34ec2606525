#!/usr/bin/env bash
# How repeatable is a calibration? `convsel calibrate` run several times on this CPU (a seed per
# run; a seed given twice is the same configurations timed again, so only the measurements differ),
# then `convsel select` of every network with each calibrated model: per network, how many layers'
# choices (primitive or input layout) differ from the first calibration's plan, and each plan's
# predicted cost. Nothing is timed end to end: the networks whose plans differ are the ones worth a
# `bench/compare_models.sh` run with the models kept by -d.
#
#   bash bench/calibrate_repeat.sh [-i ISA] [-t THREADS] [-k K] [-s "1 1 2 3"] [-m MODEL] [-d DIR]
#                                  [-x "CALIBRATE OPTIONS"] -o PREFIX NETWORK_FILE...
#
# Defaults: -i avx512, -t 2 (the thread count calibrated and selected for), -k 10, -s "1 1 2 3",
# the default model; -d keeps the calibrated models in DIR (c1.msgpack ...; otherwise a scratch
# folder); -x adds options to every calibrate (e.g. "--max-time-s 0.9 --total-time-s 150"). Writes
# PREFIX.jsonl (a line saying how it was run, one per calibration, then one per network and model)
# and PREFIX.md, rendered by bench/calibrate_repeat.py (which also says how near c1's own prices put
# the choices another calibration makes differently).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
isa=avx512
threads=2
k=10
seeds="1 1 2 3"
model=models/default.msgpack
keep=
extra=
prefix=
while getopts "i:t:k:s:m:d:x:o:" opt; do
    case $opt in
    i) isa=$OPTARG ;;
    t) threads=$OPTARG ;;
    k) k=$OPTARG ;;
    s) seeds=$OPTARG ;;
    m) model=$OPTARG ;;
    d) keep=$OPTARG ;;
    x) extra=$OPTARG ;;
    o) prefix=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [[ -z $prefix || $# -lt 1 ]]; then
    die 2 "usage: bash bench/calibrate_repeat.sh [-i ISA] [-t THREADS] [-k K] [-s SEEDS] [-m MODEL] [-d DIR] [-x OPTIONS] -o PREFIX NETWORK_FILE..."
fi
[[ -r $model ]] || die 1 "calibrate_repeat: cannot read model '$model'"
convsel=$(convsel_path)
require_built "$convsel"
make_tmp
dir=${keep:-$tmp}
mkdir -p "$dir"
jsonl=$prefix.jsonl
cpu="$(cpu_setup "$convsel"), $(nproc) logical CPUs"
python3 -c 'import json, sys, time
k = ["isa", "threads", "k", "model", "extra", "prefix", "nets", "cpu"]
run = dict(zip(k, sys.argv[1:]), date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
print(json.dumps({"run": run}))' "$isa" "$threads" "$k" "$model" "$extra" "$prefix" "$*" "$cpu" >"$jsonl"

n=0
for seed in $seeds; do
    n=$((n + 1))
    out="$dir/c$n.msgpack"
    echo "calibrate $n: --samples $k --seed $seed --threads $threads under --isa $isa" >&2
    start=$(date +%s%N)
    cal=$("$convsel" --isa "$isa" calibrate --model "$model" --samples "$k" --seed "$seed" \
        --threads "$threads" $extra --quiet --json -o "$out")
    end=$(date +%s%N)
    wall=$(awk -v ns=$((end - start)) 'BEGIN { printf "%.3f", ns / 1e9 }')
    echo "{\"calibration\": $n, \"seed\": $seed, \"wall_s\": $wall, \"model\": \"$out\", \"calibrate\": $cal}" >>"$jsonl"
done
for net in "$@"; do
    for i in $(seq 1 "$n"); do
        "$convsel" --isa "$isa" select --net "$net" --mb 1 --threads "$threads" --model "$dir/c$i.msgpack" \
            --quiet -o "$tmp/plan$i.json" 2>"$tmp/err" || die 1 "select failed on $net: $(tail -n 1 "$tmp/err")"
        plan=$(python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))))' "$tmp/plan$i.json")
        echo "{\"net\": \"$net\", \"calibration\": $i, \"plan\": $plan}" >>"$jsonl"
    done
done

python3 "$(dirname "${BASH_SOURCE[0]}")/calibrate_repeat.py" "$jsonl" "$prefix.md"
