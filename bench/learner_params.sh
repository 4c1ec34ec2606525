#!/bin/bash
# Training parameters compared by cross-validation: for each parameter list,
# `convsel eval --cv random` (20% of the layers held out) over several seeds,
# the metrics averaged, on the AVX2 dataset and on the AVX-512 datasets.
#
#   bash bench/learner_params.sh [-s "1 2 3 4 5"] [-o OUT.md] PARAMS...
#
# PARAMS are --params lists ("max_depth=7", "max_depth=10,min_leaf=1"). No
# timing: the figures are model quality, so the machine may be busy.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
seeds="1 2 3 4 5"
out=bench/results/learner_params.md
while getopts "s:o:" opt; do
    case $opt in
    s) seeds=$OPTARG ;;
    o) out=$OPTARG ;;
    *) die 2 "usage: bash bench/learner_params.sh [-s SEEDS] [-o OUT.md] PARAMS..." ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || die 2 "learner_params.sh: give at least one parameter list"
convsel=$(convsel_path)
require_built "$convsel"

declare -A data=(
    [avx2]="data/avx2.msgpack"
    [avx512]="data/avx512_layers_t1.msgpack data/avx512_layers_t2.msgpack data/avx512_sampled.msgpack data/avx512_sampled2.msgpack"
)
make_tmp
for params in "$@"; do
    for d in avx2 avx512; do
        for s in $seeds; do
            # shellcheck disable=SC2086
            json=$("$convsel" eval --cv random --seed "$s" --params "$params" --json ${data[$d]} | tr -d '\n')
            printf '%s\t%s\t%s\n' "$d" "$params" "$json" >>"$tmp/rows"
        done
        echo "learner_params.sh: $d $params done" >&2
    done
done

cpu=$(cpu_model)
python3 - "$tmp/rows" "$out" "$seeds" "$cpu, $(nproc) logical CPUs; $(date -u '+%Y-%m-%d %H:%M UTC')" <<'EOF'
import json, sys
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1])]
keys = ["mape", "spearman", "top1", "regret_mean", "regret_p95"]
groups = {}
for d, p, j in rows:
    groups.setdefault((d, p), []).append(json.loads(j))
with open(sys.argv[2], "w") as f:
    f.write("# Training parameters by cross-validation\n\n")
    f.write("`bash bench/learner_params.sh` — `convsel eval --cv random` (20%% of the layers held out) "
            "with seeds %s, metrics averaged (docs/learner.md). avx2: data/avx2.msgpack; avx512: the four "
            "AVX-512 datasets. Run on %s.\n\n" % (sys.argv[3], sys.argv[4]))
    f.write("What the runs decided: docs/learner.md.\n\n")
    f.write("| data | parameters | MAPE | Spearman per config | top-1 | regret mean | regret p95 |\n")
    f.write("|---|---|---|---|---|---|---|\n")
    for (d, p), runs in groups.items():
        m = {k: sum(r[k] for r in runs) / len(runs) for k in keys}
        f.write("| %s | `%s` | %.1f%% | %.3f | %.3f | %.2f%% | %.1f%% |\n" % (
            d, p, 100 * m["mape"], m["spearman"], m["top1"], 100 * m["regret_mean"], 100 * m["regret_p95"]))
print("wrote", sys.argv[2])
EOF
