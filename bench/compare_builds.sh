#!/usr/bin/env bash
# Two builds' models end to end: `convsel compare` (plan only) with build A's convsel and model,
# then build B's, for each network, environment and round, so that slow spells of the machine
# fall on both. compare_models.sh does the same for models one build can read; this one is for a
# change of the model file's feature schema, where each model needs its own build.
#
#   bash bench/compare_builds.sh [-r ROUNDS] [-t THREADS] [-u] -o PREFIX \
#       -a CONVSEL_A -A MODEL_A -b CONVSEL_B -B MODEL_B NETWORK_FILE...
#
# -u adds a second pass of each round with OPENBLAS_CORETYPE unset (the environment's is the
# first). Each run profiles its own oracle and times its own oneDNN alone, so the ratios (speed-up
# over oneDNN alone, gap to the oracle) are what compare. Writes PREFIX.jsonl (one line per run:
# {"round", "env", "net", "m": "A" or "B", "r": compare's JSON, null when it failed}) and PREFIX.md.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
usage="usage: bash bench/compare_builds.sh [-r ROUNDS] [-t THREADS] [-u] -o PREFIX -a CONVSEL_A -A MODEL_A -b CONVSEL_B -B MODEL_B NETWORK_FILE..."
rounds=1
threads=1
unset_too=0
prefix='' bin_a='' bin_b='' model_a='' model_b=''
while getopts "r:t:uo:a:A:b:B:" opt; do
    case $opt in
    r) rounds=$OPTARG ;;
    t) threads=$OPTARG ;;
    u) unset_too=1 ;;
    o) prefix=$OPTARG ;;
    a) bin_a=$OPTARG ;;
    A) model_a=$OPTARG ;;
    b) bin_b=$OPTARG ;;
    B) model_b=$OPTARG ;;
    *) die 2 "$usage" ;;
    esac
done
shift $((OPTIND - 1))
[[ -n $prefix && -n $bin_a && -n $bin_b && -n $model_a && -n $model_b && $# -ge 1 ]] || die 2 "$usage"
[[ $rounds =~ ^[1-9][0-9]*$ && $threads =~ ^[1-9][0-9]*$ ]] || die 2 "compare_builds: -r and -t take whole numbers"
require_built "$bin_a"
require_built "$bin_b"
for f in "$model_a" "$model_b" "$@"; do
    [[ -r $f ]] || die 1 "compare_builds: cannot read '$f'"
done
envs=(as-set)
((unset_too)) && envs+=(unset)
jsonl=$prefix.jsonl
: >"$jsonl"
for round in $(seq "$rounds"); do
    for e in "${envs[@]}"; do
        pre=()
        [[ $e == unset ]] && pre=(env -u OPENBLAS_CORETYPE)
        for net in "$@"; do
            for m in A B; do
                if [[ $m == A ]]; then bin=$bin_a model=$model_a; else bin=$bin_b model=$model_b; fi
                js=$("${pre[@]}" "$bin" compare --net "$net" --mb 1 --threads "$threads" --model "$model" --json \
                    2>/dev/null | tr -d '\n') || js=
                printf '{"round": %s, "env": "%s", "net": "%s", "m": "%s", "r": %s}\n' "$round" "$e" \
                    "$(basename "$net" .txt)" "$m" "${js:-null}" >>"$jsonl"
            done
        done
    done
done

python3 - "$jsonl" "$bin_a" "$model_a" "$bin_b" "$model_b" "$threads" "$(cpu_model), $(nproc) CPUs" <<'PY' | tee "$prefix.md"
import collections, json, statistics, sys
path, bin_a, model_a, bin_b, model_b, threads, machine = sys.argv[1:]
runs = [json.loads(l) for l in open(path)]
print(f'# Two builds end to end\n\nA: `{bin_a}` with `{model_a}`; B: `{bin_b}` with `{model_b}`; '
      f'`convsel compare --mb 1 --threads {threads} --json`, A then B per network, on {machine}. Speed-up: '
      f'oneDNN alone over the plan; gap: the plan over the oracle − 1; each run against its own oneDNN alone '
      f'and oracle.\n')
print('| round | OPENBLAS_CORETYPE | network | A speed-up | A gap | B speed-up | B gap |')
print('|---|---|---|---|---|---|---|')
cells = collections.defaultdict(dict)
for r in runs:
    cells[(r['round'], r['env'], r['net'])][r['m']] = r['r']
gaps = collections.defaultdict(list)
def fmt(x, m, key):
    if not x:
        return 'failed', 'failed'
    gaps[(m, key)].append(x['plan_ms'] / x['oracle_ms'] - 1)
    return f"{x['onednn_auto_ms'] / x['plan_ms']:.3f}×", f"{100 * (x['plan_ms'] / x['oracle_ms'] - 1):+.1f}%"
for (rnd, env, net), v in cells.items():
    a = fmt(v.get('A'), 'A', env)
    b = fmt(v.get('B'), 'B', env)
    print(f'| {rnd} | {env} | {net} | {a[0]} | {a[1]} | {b[0]} | {b[1]} |')
print()
for env in dict.fromkeys(k[1] for k in cells):
    ga, gb = gaps[('A', env)], gaps[('B', env)]
    if ga and gb:
        print(f'- {env}: mean gap to the oracle A {100 * statistics.mean(ga):+.2f}%, B {100 * statistics.mean(gb):+.2f}% '
              f'({len(ga)} and {len(gb)} runs); within 3% of the oracle: A {sum(g <= 0.03 for g in ga)}, '
              f'B {sum(g <= 0.03 for g in gb)}')
PY
