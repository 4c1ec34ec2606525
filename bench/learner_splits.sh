#!/bin/bash
# A learner change's quick check: held-out accuracy on per-CPU splits.
#
#   bash bench/learner_splits.sh [-s "1 2 3"] [-t TRAIN_SEED] [-P PARAMS] [-o OUT.md] [-p DIR] DATA...
#
# Each dataset (one CPU's profile) is split by layer shape, 20% held out, with
# every seed; a model is trained on the training part with the default
# parameters (or `--params PARAMS`) and `--seed TRAIN_SEED` (1), and scored on the held-out shapes as
# the selector prices them (`convsel eval --as-selector`). Prints one row per
# split and the means. To compare a change, run it with the changed build and
# the unchanged one (CONVSEL=path/to/convsel) and with a second -t: the spread
# between training seeds is the noise a change must beat (docs/learner.md,
# "Call-count and im2col features"). -p DIR keeps each split's predictions as
# DIR/NAME-SEED.csv (`convsel eval --predictions`), for bench/predictions_metrics.py.
# No timing: the figures are model quality.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
seeds="1 2 3"
train_seed=1
out=
pred=
params=()
while getopts "s:t:P:o:p:" opt; do
    case $opt in
    s) seeds=$OPTARG ;;
    t) train_seed=$OPTARG ;;
    P) params=(--params "$OPTARG") ;;
    o) out=$OPTARG ;;
    p) pred=$OPTARG ;;
    *) die 2 "usage: bash bench/learner_splits.sh [-s SEEDS] [-t TRAIN_SEED] [-P PARAMS] [-o OUT.md] [-p DIR] DATA..." ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || die 2 "learner_splits.sh: give at least one dataset"
convsel=$(convsel_path)
require_built "$convsel"
for d in "$@"; do
    [ -f "$d" ] || die 1 "learner_splits.sh: $d: no such dataset"
done

[ -z "$pred" ] || mkdir -p "$pred"
make_tmp
for d in "$@"; do
    for s in $seeds; do
        "$convsel" dataset split --test-frac 0.2 --seed "$s" -o "$tmp/s" "$d" 2>"$tmp/split.err" ||
            { cat "$tmp/split.err" >&2; exit 1; }
        "$convsel" train --quiet --seed "$train_seed" "${params[@]}" "$tmp/s-train.msgpack" -o "$tmp/m.msgpack"
        popt=()
        [ -z "$pred" ] || popt=(--predictions "$pred/$(basename "$d" .msgpack)-$s.csv")
        json=$("$convsel" eval --model "$tmp/m.msgpack" --as-selector --json "${popt[@]}" "$tmp/s-test.msgpack" | tr -d '\n')
        printf '%s\t%s\t%s\n' "$(basename "$d" .msgpack)" "$s" "$json" >>"$tmp/rows"
    done
done

title="Held-out shapes (20%, by shape), \`$convsel\`, training seed $train_seed${params:+, \`${params[*]}\`}, \`--as-selector\`."
python3 bench/heldout_table.py "$tmp/rows" "$title" |
    if [ -n "$out" ]; then tee "$out"; else cat; fi
