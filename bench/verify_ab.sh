#!/usr/bin/env bash
# Two builds' --verify compared end to end, alternating, on a network (NET=, default ResNet-50) at batch 1:
#   bash bench/verify_ab.sh BUILD_A BUILD_B OUTDIR [ROUNDS] [MODEL...]
# BUILD_A and BUILD_B are convsel executables (copies of two builds); for each round, model (default:
# the shipped one), thread count (1, 2) and build, `convsel compare --verify 3 --check --plans DIR
# --json` runs and one line is printed: the plan, verified, oracle and oneDNN-alone medians, verified
# / model plan and verified / oracle (both timed in the same process), and --check's own timing of the
# two. Each run's files are in OUTDIR/ROUND.NET.MODEL.tT.BUILD/ (bench/plan_layers.py reads them).
# ARGS_A / ARGS_B add options to one side's runs (e.g. ARGS_B=--in-place with one build given twice);
# ENV_A / ENV_B set environment variables for one side's runs (e.g. ENV_B=CONVSEL_VERIFY_IN_PLACE_S=1e9);
# LABEL_A / LABEL_B name the sides (default: the executables' names).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
a=${1:?usage: verify_ab.sh BUILD_A BUILD_B OUTDIR [ROUNDS] [MODEL...]}
b=${2:?}
out=${3:?}
rounds=${4:-3}
shift $(($# < 4 ? $# : 4))
models=("$@")
net=${NET:-networks/resnet_50.txt}
((${#models[@]})) || models=(models/default.msgpack)
mkdir -p "$out"
for ((rep = 1; rep <= rounds; rep++)); do
    for model in "${models[@]}"; do
        for t in 1 2; do
            for side in A B; do
                if [ $side = A ]; then bin=$a args=${ARGS_A:-} envs=${ENV_A:-} label=${LABEL_A:-$(basename "$a")}
                else bin=$b args=${ARGS_B:-} envs=${ENV_B:-} label=${LABEL_B:-$(basename "$b")}; fi
                d=$out/$rep.$(basename "$net" .txt).$(basename "$model" .msgpack).t$t.$label
                mkdir -p "$d"
                # shellcheck disable=SC2086 # args, envs: words to split
                env $envs "$bin" compare --net "$net" --mb 1 --threads "$t" --model "$model" --verify 3 $args \
                    --check --plans "$d" --json >"$d/compare.json" 2>"$d/stderr.txt"
                python3 - "$d/compare.json" "$rep $(basename "$net" .txt) $(basename "$model" .msgpack) t$t $label" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f'{sys.argv[2]} plan {r["plan_ms"]:.2f} verified {r["verified_ms"]:.2f} oracle {r["oracle_ms"]:.2f} '
      f'auto {r["onednn_auto_ms"]:.2f} | v/p {r["verified_ms"] / r["plan_ms"]:.3f} '
      f'v/a {r["verified_ms"] / r["onednn_auto_ms"]:.3f} '
      f'v/o {r["verified_ms"] / r["oracle_ms"]:.3f} | check model {r["check_model_plan_ms"]:.2f} '
      f'verified {r["check_verified_ms"]:.2f} ({r["check_verified_ms"] / r["check_model_plan_ms"]:.3f}) '
      f'kept {r["check_kept"]}')
PY
            done
        done
    done
done
