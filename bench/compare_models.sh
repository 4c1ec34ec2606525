#!/usr/bin/env bash
# Which of several models makes the better plans, end to end: `convsel compare` (plan only, no
# --verify/--check) with each model on each network and thread count, the models run one after
# the other for each (network, threads) so that slow spells of the machine fall on all of them.
# Each run profiles its own oracle and times its own onednn_auto, so compare the ratios
# (gap to the oracle, speed-up over oneDNN alone), not the milliseconds, across models.
#
#   bash bench/compare_models.sh [-t "1 2"] -o PREFIX -m MODEL [-m MODEL ...] NETWORK_FILE...
#
# Writes PREFIX.jsonl (one line per run: {"net", "t", "m", "r": compare's JSON}) and PREFIX.md
# (bench/compare_models.py JSONL MD renders it again).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
threads="1 2"
prefix=
models=()
while getopts "t:m:o:" opt; do
    case $opt in
    t) threads=$OPTARG ;;
    m) models+=("$OPTARG") ;;
    o) prefix=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [[ -z $prefix || ${#models[@]} -lt 1 || $# -lt 1 ]]; then
    die 2 "usage: bash bench/compare_models.sh [-t \"1 2\"] -o PREFIX -m MODEL [-m MODEL ...] NETWORK_FILE..."
fi
for m in "${models[@]}"; do
    [[ -r $m ]] || die 1 "compare_models: cannot read model '$m'"
done
convsel=$(convsel_path)
require_built "$convsel"
jsonl=$prefix.jsonl
: >"$jsonl"
for net in "$@"; do
    for t in $threads; do
        for m in "${models[@]}"; do
            echo "compare $net, $t thread(s), $m" >&2
            if out=$("$convsel" compare --net "$net" --mb 1 --threads "$t" --model "$m" --json 2>/dev/null); then
                printf '{"net": "%s", "t": %s, "m": "%s", "r": %s}\n' "$net" "$t" "$m" "$(tr -d '\n' <<<"$out")" >>"$jsonl"
            else
                echo "compare_models: compare failed on $net ($t threads, $m); skipped" >&2
            fi
        done
    done
done
python3 bench/compare_models.py "$jsonl" "$prefix.md"
