#!/bin/bash
# Learning curve: how the model's accuracy grows with the profiled data.
#
#   bash bench/learner_curve.sh [-s "1 2 3"] [-o OUT.md] DATA...
#
# For each seed, the datasets are merged and split by layer shape (20% held
# out); the training part is halved again and again (nested: each half is a
# subset of the part before), a model is trained on each part with the default
# parameters and scored on the same held-out shapes. The metrics are averaged
# over the seeds. No timing: the figures are model quality.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
seeds="1 2 3"
out=bench/results/learner_curve.md
halvings=3
while getopts "s:o:n:" opt; do
    case $opt in
    s) seeds=$OPTARG ;;
    o) out=$OPTARG ;;
    n) halvings=$OPTARG ;;
    *) die 2 "usage: bash bench/learner_curve.sh [-s SEEDS] [-n HALVINGS] [-o OUT.md] DATA..." ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || die 2 "learner_curve.sh: give at least one dataset"
convsel=$(convsel_path)
require_built "$convsel"

make_tmp
"$convsel" dataset merge -o "$tmp/all.msgpack" "$@" 2>/dev/null
configs() { "$convsel" dataset info --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["configs"])'; }
for s in $seeds; do
    "$convsel" dataset split --test-frac 0.2 --seed "$s" -o "$tmp/s$s" "$tmp/all.msgpack" 2>/dev/null
    part=$tmp/s$s-train.msgpack
    for ((h = 0; h <= halvings; h++)); do
        "$convsel" train "$part" -o "$tmp/m.msgpack" >/dev/null 2>&1
        json=$("$convsel" eval --model "$tmp/m.msgpack" --json "$tmp/s$s-test.msgpack" | tr -d '\n')
        printf '%s\t%s\t%s\n' "$h" "$(configs "$part")" "$json" >>"$tmp/rows"
        echo "learner_curve.sh: seed $s, training part / 2^$h done" >&2
        "$convsel" dataset split --test-frac 0.5 --seed $((s * 100 + h)) -o "$tmp/h$s-$h" "$part" 2>/dev/null
        part=$tmp/h$s-$h-train.msgpack
    done
done

cpu=$(cpu_model)
python3 - "$tmp/rows" "$out" "$seeds" "$*" "$cpu, $(nproc) logical CPUs; $(date -u '+%Y-%m-%d %H:%M UTC')" <<'EOF'
import json, sys
keys = ["mape", "spearman", "spearman_pooled", "top1", "regret_mean", "regret_p95"]
groups = {}
for line in open(sys.argv[1]):
    h, n, j = line.rstrip('\n').split('\t')
    g = groups.setdefault(int(h), {"n": [], "runs": []})
    g["n"].append(int(n))
    g["runs"].append(json.loads(j))
with open(sys.argv[2], "w") as f:
    f.write("# Learning curve\n\n")
    f.write("`bash bench/learner_curve.sh %s` — the datasets merged, 20%% of the layer shapes held out "
            "(split seeds %s), models trained with the default parameters on the training part and on "
            "nested halves of it, all scored on the same held-out shapes; metrics averaged over the "
            "seeds (docs/learner.md). Run on %s.\n\n" % (sys.argv[4], sys.argv[3], sys.argv[5]))
    f.write("| training part | configurations | MAPE | Spearman per config | Spearman pooled | top-1 "
            "| regret mean | regret p95 |\n|---|---|---|---|---|---|---|---|\n")
    for h in sorted(groups, reverse=True):
        g = groups[h]
        m = {k: sum(r[k] for r in g["runs"]) / len(g["runs"]) for k in keys}
        f.write("| 1/%d | %d | %.1f%% | %.3f | %.4f | %.3f | %.2f%% | %.1f%% |\n" % (
            2 ** h, sum(g["n"]) / len(g["n"]), 100 * m["mape"], m["spearman"], m["spearman_pooled"],
            m["top1"], 100 * m["regret_mean"], 100 * m["regret_p95"]))
print(open(sys.argv[2]).read())
EOF
