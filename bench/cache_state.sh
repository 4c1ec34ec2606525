#!/usr/bin/env bash
# How much a network's per-layer timings depend on what the caches hold: every layer of NETWORK
# timed with `convsel bench-layer` (the listed primitives interleaved) with no flush and with a
# flush of each size in -f before every timed run, the medians summed per primitive; then one
# `convsel compare` of the network, whose onednn_auto and single-best rows are the network run
# end to end. Which per-layer sums rank the primitives as the network run does?
#
#   bash bench/cache_state.sh [-t THREADS] [-p PRIMITIVES] [-f "0 4 64"] [-o PREFIX] NETWORK_FILE
#
# Writes PREFIX.md (default bench/results/cache_state). Timing: run it alone on the machine.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
threads=2
prims=onednn_auto,onednn_winograd,direct_simd
flushes="0 4 64"
prefix=bench/results/cache_state
while getopts "t:p:f:o:" opt; do
    case $opt in
    t) threads=$OPTARG ;;
    p) prims=$OPTARG ;;
    f) flushes=$OPTARG ;;
    o) prefix=$OPTARG ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
(($# == 1)) || die 2 "usage: bash bench/cache_state.sh [-t T] [-p LIST] [-f \"0 4 64\"] [-o PREFIX] NETWORK_FILE"
net=$1
convsel=$(convsel_path)
require_built "$convsel"
make_tmp
: >"$tmp/rows"
grep -v '^[[:space:]]*\(#\|$\)' "$net" | while IFS= read -r desc; do
    for f in $flushes; do
        "$convsel" bench-layer "$desc" --threads "$threads" --primitives "$prims" --flush "$f" --max-time 0.5 \
            --warmup 0.01 --json 2>/dev/null | python3 -c '
import json, sys
doc = json.load(sys.stdin)
for r in doc["results"]:
    if r.get("applicable"):
        print(sys.argv[1], r["primitive"], r["median_ms"])' "$f" >>"$tmp/rows" || true
    done
done
"$convsel" compare --net "$net" --mb 1 --threads "$threads" --json >"$tmp/compare.json" 2>/dev/null
python3 - "$tmp/rows" "$tmp/compare.json" "$net" "$threads" "$flushes" "$prims" "$prefix.md" <<'PY'
import collections, datetime, json, sys
rows, cmp_path, net, threads, flushes, prims, out = sys.argv[1:]
flushes = flushes.split()
sums = collections.defaultdict(float)
for line in open(rows):
    f, p, ms = line.split()
    sums[(f, p)] += float(ms)
c = json.load(open(cmp_path))
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
o = ["# Per-layer timings and the caches", "",
     f"`bash bench/cache_state.sh -t {threads} -p {prims} -f \"{' '.join(flushes)}\" {net}` on "
     f"{datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC, {cpu}. Batch as in the file, {threads} thread(s). Each layer "
     "timed by `convsel bench-layer` (the primitives interleaved, medians); flush F: F MiB written before every "
     "timed run (`--flush`), 0 = none (how datasets, the oracle and `--verify` time). Sums over the layers, ms; "
     "the ratio is to the fastest primitive of the column.", "",
     "| primitive | " + " | ".join(f"flush {f} MiB: sum, ratio" for f in flushes) + " |",
     "|---|" + "---|" * len(flushes)]
best = {f: min(sums[(f, p)] for p in prims.split(",") if (f, p) in sums) for f in flushes}
for p in prims.split(","):
    o.append(f"| {p} | " + " | ".join(f"{sums[(f, p)]:.3f}, {sums[(f, p)] / best[f]:.2f}x" if (f, p) in sums else "-"
                                      for f in flushes) + " |")
o += ["", f"The network run end to end (`convsel compare`, one process, medians): onednn_auto on every layer "
      f"{c['onednn_auto_ms']:.3f} ms; the best single primitive by the per-layer profile, {c['single_best']}, "
      f"{c['single_best_ms']:.3f} ms; the oracle plan (per-layer profile, no flush) {c['oracle_ms']:.3f} ms; the "
      f"model's plan {c['plan_ms']:.3f} ms."]
open(out, "w").write("\n".join(o) + "\n")
print("\n".join(o))
PY
