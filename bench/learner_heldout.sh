#!/bin/bash
# Held-out shapes of some datasets, the others trained on whole: a learner
# change's check where the model must hold several datasets at once.
#
#   bash bench/learner_heldout.sh [-s "1 2 3"] [-t TRAIN_SEED] [-o OUT.md] \
#       -T "HELD..." [-E "SCORED..."] [TRAIN...]
#
# For each split seed, every dataset of -T and -E is split by layer shape (20%
# held out, `convsel dataset split`); a model is trained on the TRAIN datasets
# whole plus the training parts of the -T ones (the -E ones' are not used), with
# the default parameters and `--seed TRAIN_SEED` (1), and scored on each held-out
# part as the selector prices (`convsel eval --as-selector`). Files profiled
# from one recipe (the same configurations in the same order) split alike, so
# that a shape held out of one is held out of all; the script checks it for
# files whose shapes are the same. Prints one row per split and dataset and the
# means per dataset. Compare builds with CONVSEL=path/to/convsel and training
# seeds with -t (docs/learner.md, "OpenBLAS's kernels as a feature"). No timing.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
usage="usage: bash bench/learner_heldout.sh [-s SEEDS] [-t TRAIN_SEED] [-o OUT.md] -T \"HELD...\" [-E \"SCORED...\"] [TRAIN...]"
seeds="1 2 3"
train_seed=1
out=
held=
scored=
while getopts "s:t:o:T:E:" opt; do
    case $opt in
    s) seeds=$OPTARG ;;
    t) train_seed=$OPTARG ;;
    o) out=$OPTARG ;;
    T) held=$OPTARG ;;
    E) scored=$OPTARG ;;
    *) die 2 "$usage" ;;
    esac
done
shift $((OPTIND - 1))
[ -n "$held$scored" ] || die 2 "learner_heldout.sh: give the datasets to hold out with -T (or -E)"$'\n'"$usage"
convsel=$(convsel_path)
require_built "$convsel"
for d in $held $scored "$@"; do
    [ -f "$d" ] || die 1 "learner_heldout.sh: $d: no such dataset"
done

shapes() { # the sorted shapes of a dataset (desc column of the export)
    "$convsel" dataset export --csv "$1" | python3 -c '
import csv, sys
print("\n".join(sorted({r["desc"] for r in csv.DictReader(sys.stdin)})))'
}

make_tmp
for d in $held $scored; do
    shapes "$d" >"$tmp/$(basename "$d" .msgpack).all"
done
for s in $seeds; do
    train=("$@")
    for d in $held $scored; do
        b=$(basename "$d" .msgpack)
        "$convsel" dataset split --test-frac 0.2 --seed "$s" -o "$tmp/$b" "$d" 2>"$tmp/split.err" ||
            { cat "$tmp/split.err" >&2; exit 1; }
        shapes "$tmp/$b-test.msgpack" >"$tmp/$b.test"
        case " $held " in *" $d "*) train+=("$tmp/$b-train.msgpack") ;; esac
    done
    for d in $held $scored; do
        for e in $held $scored; do
            a=$(basename "$d" .msgpack) b=$(basename "$e" .msgpack)
            if cmp -s "$tmp/$a.all" "$tmp/$b.all" && ! cmp -s "$tmp/$a.test" "$tmp/$b.test"; then
                die 1 "learner_heldout.sh: $d and $e hold the same shapes but split apart (not one recipe's order)"
            fi
        done
    done
    "$convsel" train --quiet --seed "$train_seed" "${train[@]}" -o "$tmp/m.msgpack"
    for d in $held $scored; do
        b=$(basename "$d" .msgpack)
        json=$("$convsel" eval --model "$tmp/m.msgpack" --as-selector --json "$tmp/$b-test.msgpack" | tr -d '\n')
        role=held
        case " $held " in *" $d "*) ;; *) role=scored ;; esac
        printf '%s\t%s\t%s\t%s\n' "$b" "$role" "$s" "$json" >>"$tmp/rows"
    done
done

title="Held-out shapes (20%, by shape), \`$convsel\`, training seed $train_seed, \`--as-selector\`; \
trained whole: ${*:-nothing}; \"held\": its training part trained on, \"scored\": not."
python3 bench/heldout_table.py --roles "$tmp/rows" "$title" |
    if [ -n "$out" ]; then tee "$out"; else cat; fi
