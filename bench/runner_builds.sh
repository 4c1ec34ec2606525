#!/usr/bin/env bash
# One plan per network run by two builds' `convsel run`, alternating A, B, A, B, ... so that slow
# spells of the machine fall on both: for a change to the runner itself (how it lays out buffers,
# which reorders it makes), where the plan stays the same and only its execution changes.
#
#   bash bench/runner_builds.sh [-r ROUNDS] [-t THREADS] [-m MODEL] -o PREFIX -a CONVSEL_A -b CONVSEL_B NETWORK_FILE...
#
# The plan is build B's model plan (`select --mb 1`, MODEL or the default model). Each run also
# records its wall time (instantiation included) and peak resident memory (GNU time). Writes
# PREFIX.jsonl (one line per run: {"round", "net", "m": "A" or "B", "wall_s", "max_rss_kb",
# "r": run's JSON}) and PREFIX.md (per network: medians of each side and B / A).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
usage="usage: bash bench/runner_builds.sh [-r ROUNDS] [-t THREADS] [-m MODEL] -o PREFIX -a CONVSEL_A -b CONVSEL_B NETWORK_FILE..."
rounds=3 threads=1 model='' prefix='' bin_a='' bin_b=''
while getopts "r:t:m:o:a:b:" opt; do
    case $opt in
    r) rounds=$OPTARG ;;
    t) threads=$OPTARG ;;
    m) model=$OPTARG ;;
    o) prefix=$OPTARG ;;
    a) bin_a=$OPTARG ;;
    b) bin_b=$OPTARG ;;
    *) die 2 "$usage" ;;
    esac
done
shift $((OPTIND - 1))
[[ -n $prefix && -n $bin_a && -n $bin_b && $# -ge 1 ]] || die 2 "$usage"
[[ $rounds =~ ^[1-9][0-9]*$ && $threads =~ ^[1-9][0-9]*$ ]] || die 2 "runner_builds: -r and -t take whole numbers"
require_built "$bin_a"
require_built "$bin_b"
[[ -x /usr/bin/time ]] || die 1 "runner_builds: needs GNU time (/usr/bin/time, Debian package time)"
make_tmp
model_args=()
[[ -n $model ]] && model_args=(--model "$model")
: >"$prefix.jsonl"
for net in "$@"; do
    name=$(basename "$net" .txt)
    "$bin_b" select --net "$net" --mb 1 --threads "$threads" "${model_args[@]}" --quiet -o "$tmp/$name.plan.json" \
        >/dev/null || die 1 "runner_builds: select failed on $net"
    for ((round = 1; round <= rounds; round++)); do
        for side in A B; do
            bin=$bin_a
            [[ $side == B ]] && bin=$bin_b
            r=null
            if /usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" run --net "$net" --plan "$tmp/$name.plan.json" \
                --max-time 3 --json >"$tmp/out" 2>/dev/null; then
                r=$(cat "$tmp/out")
            fi
            read -r wall rss <"$tmp/time"
            printf '{"round": %d, "net": "%s", "m": "%s", "wall_s": %s, "max_rss_kb": %s, "r": %s}\n' \
                "$round" "$name" "$side" "$wall" "$rss" "$r" >>"$prefix.jsonl"
        done
    done
done
python3 - "$prefix.jsonl" "$bin_a" "$bin_b" "$threads" >"$prefix.md" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"# The same plan run by two builds (A: `{sys.argv[2]}`, B: `{sys.argv[3]}`), {sys.argv[4]} thread(s)\n")
print("Medians over the rounds of `convsel run --max-time 3` (A and B alternating); wall: the whole")
print("command, instantiation included; RSS: peak resident memory.\n")
print("| network | rounds | A median ms | B median ms | B / A | A wall s | B wall s | A RSS MB | B RSS MB |")
print("|---|---|---|---|---|---|---|---|---|")
for net in dict.fromkeys(r["net"] for r in rows):
    side = {m: [r for r in rows if r["net"] == net and r["m"] == m and r["r"]] for m in "AB"}
    if not side["A"] or not side["B"]:
        print(f"| {net} | failed | | | | | | | |")
        continue
    med = {m: statistics.median(r["r"]["median_ms"] for r in side[m]) for m in "AB"}
    wall = {m: statistics.median(r["wall_s"] for r in side[m]) for m in "AB"}
    rss = {m: statistics.median(r["max_rss_kb"] for r in side[m]) / 1024 for m in "AB"}
    print(f"| {net} | {len(side['A'])} | {med['A']:.2f} | {med['B']:.2f} | {med['B'] / med['A']:.3f} | "
          f"{wall['A']:.1f} | {wall['B']:.1f} | {rss['A']:.0f} | {rss['B']:.0f} |")
EOF
cat "$prefix.md"
