#!/usr/bin/env bash
# Wall time of `convsel calibrate` on this machine (profiling the chosen
# configurations + fitting), for each target and K, into bench/results/calibrate.md.
#
#   bash bench/calibrate_time.sh [-k "10 20 50"] [-o PREFIX]
#
# Targets: this CPU capped to AVX2 (--isa avx2) and this CPU at 1 thread.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
ks="10 20 50"
prefix=bench/results/calibrate
while getopts "k:o:" opt; do
    case $opt in
    k) ks=$OPTARG ;;
    o) prefix=$OPTARG ;;
    *) exit 2 ;;
    esac
done
convsel=$(convsel_path)
require_built "$convsel"
make_tmp
{
    echo "# Calibration wall time"
    echo
    echo "\`bash bench/calibrate_time.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), $(cpu_model),"
    echo "source \`models/default.msgpack\`, default method. Wall time of the whole command, start to exit ("
    echo "start-up, choosing, profiling, fitting, writing) and the parts \`--json\` reports."
    echo
    echo "| target | K | wall s | profile s | records | method fitted | cv_rmse_log | cv_regret_log |"
    echo "|---|---|---|---|---|---|---|---|"
} >"$prefix.md"
for target in avx2 t1; do
    for k in $ks; do
        if [ "$target" = avx2 ]; then
            args=(--isa avx2 calibrate --threads 1,2)
        else
            args=(calibrate --threads 1)
        fi
        start=$(date +%s.%N)
        "$convsel" "${args[@]}" --samples "$k" --seed 1 --json -o "$tmp/cal.msgpack" >"$tmp/out.json" 2>"$tmp/err" ||
            die 1 "calibrate failed: $(cat "$tmp/err")"
        end=$(date +%s.%N)
        python3 - "$tmp/out.json" "$target" "$k" "$start" "$end" >>"$prefix.md" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall = float(sys.argv[5]) - float(sys.argv[4])
method = r['method'] + (' (auto)' if r.get('chosen_by_auto') else '')
print(f"| {sys.argv[2]} | {sys.argv[3]} | {wall:.1f} | {r['profile_seconds']:.1f} | {r['records']} | {method} | "
      f"{r['cv_rmse_log']:.3f} | {r.get('cv_regret_log', 0):.3f} |")
PY
    done
done
cat "$prefix.md"
