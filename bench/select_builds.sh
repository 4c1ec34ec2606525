#!/usr/bin/env bash
# How long two builds take to select: `convsel select` (the model's plan, nothing measured) with
# build A's convsel, then build B's, for each network and round, so that slow spells of the machine
# fall on both. Each run is a fresh process: its "selected in" time is a first selection (oneDNN's
# answers and the model's trees are cold), and its wall time is what a user of the command line
# waits for (the process, loading the model and the network, selecting, printing).
#
#   bash bench/select_builds.sh [-r ROUNDS] [-t THREADS] -m MODEL -o PREFIX -a CONVSEL_A -b CONVSEL_B NETWORK_FILE...
#
# Writes PREFIX.jsonl (one line per run: {"round", "net", "build": "A" or "B", "select_ms", "wall_ms"})
# and PREFIX.md (per network: the medians over rounds of each build, and B / A).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
usage="usage: bash bench/select_builds.sh [-r ROUNDS] [-t THREADS] -m MODEL -o PREFIX -a CONVSEL_A -b CONVSEL_B NETWORK_FILE..."
rounds=10 threads=1 model='' prefix='' bin_a='' bin_b=''
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
[[ -n $model && -n $prefix && -n $bin_a && -n $bin_b && $# -ge 1 ]] || die 2 "$usage"
[[ $rounds =~ ^[1-9][0-9]*$ && $threads =~ ^[1-9][0-9]*$ ]] || die 2 "select_builds: -r and -t take whole numbers"
require_built "$bin_a"
require_built "$bin_b"
[[ -r $model ]] || die 1 "select_builds: cannot read $model"
: >"$prefix.jsonl"
for ((r = 1; r <= rounds; r++)); do
    for net in "$@"; do
        for build in A B; do
            bin=$bin_a
            [[ $build == B ]] && bin=$bin_b
            t0=$(date +%s%N)
            line=$("$bin" select --net "$net" --mb 1 --threads "$threads" --model "$model" 2>/dev/null | tail -n 1) ||
                die 1 "select_builds: $bin failed on $net"
            t1=$(date +%s%N)
            [[ $line =~ ^selected\ in\ ([0-9.]+)\ ms ]] || die 1 "select_builds: no time in '$line' ($bin, $net)"
            printf '{"round": %d, "net": "%s", "build": "%s", "select_ms": %s, "wall_ms": %.1f}\n' "$r" \
                "$(basename "$net" .txt)" "$build" "${BASH_REMATCH[1]}" "$(((t1 - t0) / 100000))e-1" >>"$prefix.jsonl"
        done
    done
done
python3 - "$prefix.jsonl" "$bin_a" "$bin_b" "$model" "$threads" "$(cpu_model)" "$(date -u '+%Y-%m-%d %H:%M UTC')" \
    >"$prefix.md" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("# Selection time of two builds, a fresh process per run\n")
print(f"CPU: {sys.argv[6]}; {sys.argv[7]}. A = `{sys.argv[2]}`, B = `{sys.argv[3]}`, model `{sys.argv[4]}`,")
print(f"{sys.argv[5]} thread(s). `convsel select`'s \"selected in\" time and the whole command's wall time")
print("(older files: the first only), A then B per network and round; medians over the rounds (min–max in")
print("brackets).\n")
wall = all("wall_ms" in r for r in rows)
print("| network | rounds | A ms | B ms | B / A |" + (" A wall ms | B wall ms | B / A |" if wall else ""))
print("|---|---|---|---|---|" + ("---|---|---|" if wall else ""))
def cells(net, key):
    a = [r[key] for r in rows if r["net"] == net and r["build"] == "A"]
    b = [r[key] for r in rows if r["net"] == net and r["build"] == "B"]
    ma, mb = statistics.median(a), statistics.median(b)
    return len(a), f" {ma:.2f} ({min(a):.2f}–{max(a):.2f}) | {mb:.2f} ({min(b):.2f}–{max(b):.2f}) | {mb / ma:.3f} |"
for net in dict.fromkeys(r["net"] for r in rows):
    n, sel = cells(net, "select_ms")
    print(f"| {net} | {n} |{sel}" + (cells(net, "wall_ms")[1] if wall else ""))
EOF
cat "$prefix.md"
