#!/usr/bin/env bash
# What `convsel select --verify K` costs with two builds (or three): build A's convsel, then build
# B's (then C's), for each network and round, so that slow spells of the machine fall on both. Each run is a fresh process;
# recorded are its wall time and peak resident memory (/usr/bin/time), the plan's verify_s, and from
# --verify's own line the time it took to build the in-place networks and run each once, the time
# timing them, and how many networks and rounds it ran.
#
#   bash bench/verify_cost_builds.sh [-r ROUNDS] [-t THREADS] [-k K] -m MODEL -o PREFIX \
#       -a CONVSEL_A -b CONVSEL_B [-c CONVSEL_C] NETWORK_FILE...
#
# Writes PREFIX.jsonl (one line per run), PREFIX.md (per network: medians over rounds of each build,
# B / A and C / B) and each run's plan as PREFIX.plans/ROUND.NET.BUILD.json.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
usage="usage: bash bench/verify_cost_builds.sh [-r ROUNDS] [-t THREADS] [-k K] -m MODEL -o PREFIX -a CONVSEL_A -b CONVSEL_B [-c CONVSEL_C] NETWORK_FILE..."
rounds=2 threads=2 k=3 model='' prefix='' bin_a='' bin_b='' bin_c=''
while getopts "r:t:k:m:o:a:b:c:" opt; do
    case $opt in
    r) rounds=$OPTARG ;;
    t) threads=$OPTARG ;;
    k) k=$OPTARG ;;
    m) model=$OPTARG ;;
    o) prefix=$OPTARG ;;
    a) bin_a=$OPTARG ;;
    b) bin_b=$OPTARG ;;
    c) bin_c=$OPTARG ;;
    *) die 2 "$usage" ;;
    esac
done
shift $((OPTIND - 1))
[[ -n $model && -n $prefix && -n $bin_a && -n $bin_b && $# -ge 1 ]] || die 2 "$usage"
[[ $rounds =~ ^[1-9][0-9]*$ && $threads =~ ^[1-9][0-9]*$ && $k =~ ^[2-9]$ ]] ||
    die 2 "verify_cost_builds: -r and -t take whole numbers, -k 2 to 9"
require_built "$bin_a"
require_built "$bin_b"
builds=(A B)
[[ -z $bin_c ]] || { require_built "$bin_c" && builds+=(C); }
[[ -r $model ]] || die 1 "verify_cost_builds: cannot read $model"
[[ -x /usr/bin/time ]] || die 1 "verify_cost_builds: needs /usr/bin/time (Debian package time)"
make_tmp
mkdir -p "$prefix.plans"
: >"$prefix.jsonl"
for ((r = 1; r <= rounds; r++)); do
    for net in "$@"; do
        name=$(basename "$net" .txt)
        for build in "${builds[@]}"; do
            bin=$bin_a
            [[ $build == B ]] && bin=$bin_b
            [[ $build == C ]] && bin=$bin_c
            plan=$prefix.plans/$r.$name.$build.json
            /usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" select --net "$net" --mb 1 --threads "$threads" \
                --model "$model" --verify "$k" -o "$plan" >/dev/null 2>"$tmp/err" ||
                die 1 "verify_cost_builds: $bin failed on $net: $(tail -n 2 "$tmp/err")"
            python3 - "$tmp/time" "$tmp/err" "$plan" "$r" "$name" "$build" >>"$prefix.jsonl" <<'EOF'
import json, re, sys
wall, rss_kb = open(sys.argv[1]).read().split()[-2:]
err = open(sys.argv[2]).read()
plan = json.load(open(sys.argv[3]))
m = re.search(r"--verify in place: (\d+) networks, (\d+) rounds each; ([0-9.]+) s to build them and run each "
              r"once \(([0-9.]+) s of it the runs\), ([0-9.]+) s timed", err)
row = {"round": int(sys.argv[4]), "net": sys.argv[5], "build": sys.argv[6], "wall_s": float(wall),
       "max_rss_mb": int(rss_kb) / 1024.0, "verify_s": plan["verify_s"], "verified_layers": plan["verified_layers"],
       "predicted_ms": plan["total_ms"],
       "choices": [l["primitive"] for l in plan["layers"]]}
if m:
    row.update(networks=int(m[1]), rounds=int(m[2]), build_and_run_s=float(m[3]), runs_s=float(m[4]),
               timed_s=float(m[5]))
print(json.dumps(row))
EOF
        done
    done
done
python3 - "$prefix.jsonl" "$bin_a" "$bin_b" "$model" "$threads" "$k" "$(cpu_model)" \
    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$bin_c" >"$prefix.md" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
three = bool(sys.argv[9])
print("# The cost of `convsel select --verify` with two or three builds, a fresh process per run\n")
print(f"CPU: {sys.argv[7]}; {sys.argv[8]}. A = `{sys.argv[2]}`, B = `{sys.argv[3]}`" +
      (f", C = `{sys.argv[9]}`" if three else "") + f", model `{sys.argv[4]}`,")
print(f"{sys.argv[5]} thread(s), `--verify {sys.argv[6]}`. The builds in turn per network and round; medians over the rounds")
print("(min–max in brackets). build+1 run: --verify's own figure for building the in-place networks and")
print("running each once; in place: its interleaved rounds. Peak memory: the process's maximum resident set.\n")
print("| network | rounds | key | A | B | B / A |" + (" C | C / B |" if three else ""))
print("|---|---|---|---|---|---|" + ("---|---|" if three else ""))
for net in dict.fromkeys(r["net"] for r in rows):
    for key, label in (("wall_s", "wall s"), ("verify_s", "verify_s"), ("build_and_run_s", "build+1 run s"),
                       ("timed_s", "in place s"), ("max_rss_mb", "peak MiB")):
        a, b, c = ([r[key] for r in rows if r["net"] == net and r["build"] == x and key in r] for x in "ABC")
        if not a or not b or (three and not c):
            continue
        ma, mb = statistics.median(a), statistics.median(b)
        line = (f"| {net} | {len(a)} | {label} | {ma:.2f} ({min(a):.2f}–{max(a):.2f}) | "
                f"{mb:.2f} ({min(b):.2f}–{max(b):.2f}) | {mb / ma:.3f} |")
        if three:
            mc = statistics.median(c)
            line += f" {mc:.2f} ({min(c):.2f}–{max(c):.2f}) | {mc / mb:.3f} |"
        print(line)
print("\nChoices: how many layers each run's plan runs differently from round 1's plan of build A")
print("(the verified choices move with the timing noise on near ties).\n")
for net in dict.fromkeys(r["net"] for r in rows):
    ref = next(r["choices"] for r in rows if r["net"] == net and r["build"] == "A" and r["round"] == 1)
    diffs = [f'{r["round"]}{r["build"]}: {sum(x != y for x, y in zip(ref, r["choices"]))}'
             for r in rows if r["net"] == net]
    print(f"- {net} ({len(ref)} layers): " + ", ".join(diffs))
EOF
cat "$prefix.md"
