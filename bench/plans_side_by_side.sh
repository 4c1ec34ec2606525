#!/usr/bin/env bash
# How far apart several models' plans for one network really are: `convsel select` with each model,
# then every plan and oneDNN alone (`select` with every other primitive excluded) run end to end by
# one `convsel run --plan ... --plan ...`, interleaved in one process, each with its own weights,
# to a median known within about 1%. Unlike bench/compare_models.sh (one `compare` per model, each
# with its own oracle and its own spell of the machine), the plans' ratios here come from one run.
#
#   bash bench/plans_side_by_side.sh [-i ISA] [-t THREADS] [-s SECONDS] [-x "SELECT OPTIONS"] -o PREFIX
#                                    -m MODEL [-m MODEL ...] NETWORK_FILE...
#
# Defaults: -i avx512, -t 2, -s 5 (seconds of interleaved timing per network); -x adds options to
# every model's `convsel select` (e.g. "--verify 3" or "--verify 3 --check"), not to oneDNN alone's. Writes PREFIX.jsonl
# (a line saying how it was run, then one per network: the models' plan files' choices and
# `convsel run --json`'s output) and PREFIX.md, rendered by bench/plans_side_by_side.py.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
isa=avx512
threads=2
seconds=5
extra=
prefix=
models=()
while getopts "i:t:s:x:o:m:" opt; do
    case $opt in
    i) isa=$OPTARG ;;
    t) threads=$OPTARG ;;
    s) seconds=$OPTARG ;;
    x) extra=$OPTARG ;;
    o) prefix=$OPTARG ;;
    m) models+=("$OPTARG") ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [[ -z $prefix || ${#models[@]} -lt 1 || ${#models[@]} -gt 7 || $# -lt 1 ]]; then
    die 2 "usage: bash bench/plans_side_by_side.sh [-i ISA] [-t THREADS] [-s SECONDS] [-x OPTIONS] -o PREFIX -m MODEL (1 to 7) NETWORK_FILE..."
fi
for m in "${models[@]}"; do
    [[ -r $m ]] || die 1 "plans_side_by_side: cannot read model '$m'"
done
convsel=$(convsel_path)
require_built "$convsel"
make_tmp
jsonl=$prefix.jsonl
cpu="$(cpu_setup "$convsel"), $(nproc) logical CPUs"
python3 -c 'import json, sys, time
run = dict(zip(["isa", "threads", "seconds", "prefix", "cpu", "extra"], sys.argv[1:7]), models=sys.argv[7].split("\n"),
           nets=sys.argv[8], date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
print(json.dumps({"run": run}))' "$isa" "$threads" "$seconds" "$prefix" "$cpu" "$extra" "$(printf '%s\n' "${models[@]}")" "$*" >"$jsonl"
# oneDNN alone: every primitive but onednn_auto excluded.
others=$("$convsel" primitives | awk 'NR > 1 && $1 != "onednn_auto" && $1 != "reference" { print $1 }' | paste -sd ,)
for net in "$@"; do
    echo "plans side by side: $net at $threads threads" >&2
    args=()
    "$convsel" --isa "$isa" select --net "$net" --mb 1 --threads "$threads" --exclude "$others" --quiet \
        -o "$tmp/onednn.json" 2>"$tmp/err" || die 1 "select (oneDNN alone) failed on $net: $(tail -n 1 "$tmp/err")"
    args+=(--plan "$tmp/onednn.json")
    i=0
    for m in "${models[@]}"; do
        i=$((i + 1))
        "$convsel" --isa "$isa" select --net "$net" --mb 1 --threads "$threads" --model "$m" $extra --quiet \
            -o "$tmp/m$i.json" 2>"$tmp/err" || die 1 "select failed on $net with $m: $(tail -n 1 "$tmp/err")"
        args+=(--plan "$tmp/m$i.json")
    done
    "$convsel" --isa "$isa" run --net "$net" "${args[@]}" --max-time "$seconds" --json >"$tmp/run.json" 2>"$tmp/err" ||
        die 1 "run failed on $net: $(tail -n 1 "$tmp/err")"
    python3 - "$net" "$tmp/run.json" "$tmp/onednn.json" "$tmp"/m*.json <<'PY' >>"$jsonl"
import json, sys
net, run, plans = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3:]
choices = []
for f in sorted(plans[1:], key=lambda f: int(f.rsplit('/m', 1)[1][:-5])):
    p = json.load(open(f))
    choices.append({'boundary_layout': p['boundary_layout'], 'total_ms': p['total_ms'],
                    'layers': [[l['primitive'], l['src_layout']] for l in p['layers']]})
print(json.dumps({'net': net, 'run': run, 'choices': choices}))
PY
done
python3 "$(dirname "${BASH_SOURCE[0]}")/plans_side_by_side.py" "$jsonl" "$prefix.md"
