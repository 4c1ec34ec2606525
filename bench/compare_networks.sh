#!/usr/bin/env bash
# End-to-end proof over networks: `convsel compare` (the model's plan, onednn_auto on every layer,
# the best single primitive, the oracle from exhaustive profiling, all timed interleaved in one
# process) on each network at batch 1, for each thread count, into bench/results/compare.md + .csv.
#
#   bash bench/compare_networks.sh [-t "1 2"] [-m MODEL] [-o PREFIX] NETWORK_FILE...
#
# Without networks: every file of ../shared/networks and networks/ (1D/3D layers are skipped).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
threads="1 2"
model=models/default.msgpack
prefix=bench/results/compare
while getopts "t:m:o:" opt; do
    case $opt in
    t) threads=$OPTARG ;;
    m) model=$OPTARG ;;
    o) prefix=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if (($# == 0)); then
    set -- ../shared/networks/*.txt networks/*.txt
fi
convsel=${CONVSEL:-build/convsel}
jsonl=$prefix.jsonl
: >"$jsonl"
for t in $threads; do
    for net in "$@"; do
        echo "compare $net, $t thread(s)" >&2
        if out=$("$convsel" compare --net "$net" --mb 1 --threads "$t" --model "$model" --json 2>/dev/null); then
            echo "$out" >>"$jsonl"
        else
            echo "  failed: $net" >&2
        fi
    done
done
python3 - "$jsonl" "$prefix" "$model" <<'PY'
import json, sys, datetime, platform
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
prefix, model = sys.argv[2], sys.argv[3]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
with open(prefix + ".csv", "w") as f:
    keys = ["network", "mb", "threads", "layers", "plan_ms", "onednn_auto_ms", "single_best_ms", "single_best",
            "oracle_ms", "select_ms", "oracle_profile_s", "speedup_vs_onednn_auto", "plan_vs_oracle", "model_id"]
    f.write(",".join(keys) + "\n")
    for r in rows:
        f.write(",".join(str(r[k]) for k in keys) + "\n")
with open(prefix + ".md", "w") as f:
    f.write("# End to end: the model's plan against oneDNN alone and the oracle\n\n")
    f.write(f"CPU: {cpu}, {platform.node() and 'this machine'}; {datetime.date.today()}; model {model}.\n")
    f.write("Batch 1. Each row is one `convsel compare` run: the four networks (model plan, onednn_auto on every "
            "layer, the best single primitive on every layer, the oracle plan from exhaustive profiling) timed "
            "interleaved end to end in one process; medians. speed-up = onednn_auto / plan; gap = plan / oracle - 1. "
            "profile/select = oracle_profile_s / select_ms.\n\n")
    f.write("| network | threads | layers | plan ms | onednn_auto ms | single best ms (which) | oracle ms | "
            "speed-up | gap to oracle | select ms | oracle profiling s | profile/select |\n")
    f.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write(f"| {r['network']} | {r['threads']} | {r['layers']} | {r['plan_ms']:.3f} | {r['onednn_auto_ms']:.3f} | "
                f"{r['single_best_ms']:.3f} ({r['single_best']}) | {r['oracle_ms']:.3f} | "
                f"{r['speedup_vs_onednn_auto']:.3f}x | {100 * r['plan_vs_oracle']:+.1f}% | {r['select_ms']:.2f} | "
                f"{r['oracle_profile_s']:.1f} | {r['oracle_profile_s'] * 1e3 / max(r['select_ms'], 1e-3):.0f}x |\n")
print(open(prefix + ".md").read())
PY
