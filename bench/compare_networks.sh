#!/usr/bin/env bash
# End-to-end proof over networks: `convsel compare` (the model's plan, onednn_auto on every layer,
# the best single primitive, the oracle from exhaustive profiling, all timed interleaved in one
# process) on each network at batch 1, for each thread count, into bench/results/compare.md + .csv.
#
#   bash bench/compare_networks.sh [-t "1 2"] [-m MODEL] [-v K] [-c] [-o PREFIX] NETWORK_FILE...
#
# -v K also times the plan made with --verify K (close calls measured).
# -c   also times the plan made with --check (the fastest end to end of the model's plan, the
#      verified plan, oneDNN alone and the plans made without each of our own families it uses).
#
# Without networks: every file of ../shared/networks and networks/ (1D/3D layers are skipped).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
threads="1 2"
model=models/default.msgpack
prefix=bench/results/compare
verify=0
check=0
while getopts "t:m:o:v:c" opt; do
    case $opt in
    t) threads=$OPTARG ;;
    m) model=$OPTARG ;;
    o) prefix=$OPTARG ;;
    v) verify=$OPTARG ;;
    c) check=1 ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if (($# == 0)); then
    set -- ../shared/networks/*.txt networks/*.txt
fi
convsel=$(convsel_path)
require_built "$convsel"
jsonl=$prefix.jsonl
: >"$jsonl"
for t in $threads; do
    for net in "$@"; do
        echo "compare $net, $t thread(s)" >&2
        vopt=()
        ((verify > 0)) && vopt=(--verify "$verify")
        ((check)) && vopt+=(--check)
        if out=$("$convsel" compare --net "$net" --mb 1 --threads "$t" --model "$model" "${vopt[@]}" --json 2>/dev/null); then
            echo "{\"file\": \"$net\", ${out#\{}" >>"$jsonl"
        else
            echo "  failed: $net" >&2
        fi
    done
done
setup=$(cpu_setup "$convsel")
python3 - "$jsonl" "$prefix" "$model" "$verify" "$check" "$setup" <<'PY'
import json, sys, datetime
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
prefix, model, verify, check, setup = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
keys = ["file", "network", "mb", "threads", "layers", "plan_ms", "onednn_auto_ms", "single_best_ms", "single_best",
        "oracle_ms", "select_ms", "oracle_profile_s", "speedup_vs_onednn_auto", "plan_vs_oracle", "model_id"]
if verify:
    keys += ["verify_k", "verified_ms", "verified_select_ms", "verified_layers", "verify_s", "verified_vs_oracle",
             "verified_speedup_vs_onednn_auto"]
if check:
    keys += ["checked_ms", "checked_select_ms", "check_s", "check_kept", "check_model_plan_ms", "check_verified_ms",
             "check_onednn_alone_ms", "checked_vs_oracle", "checked_speedup_vs_onednn_auto"]
with open(prefix + ".csv", "w") as f:
    f.write(",".join(keys) + "\n")
    for r in rows:
        f.write(",".join(str(r.get(k, "")) for k in keys) + "\n")

def name(r):
    return r["file"].replace("../shared/networks/", "shared/").replace("networks/", "", 1).replace(".txt", "")

with open(prefix + ".md", "w") as f:
    f.write("# End to end: the model's plan against oneDNN alone and the oracle\n\n")
    f.write(f"CPU: {setup}; 2 vCPUs; {datetime.date.today()}; model {model} (id {rows[0]['model_id'] if rows else '?'}).\n")
    f.write("Batch 1. Each row is one `convsel compare --json` run (`bash bench/compare_networks.sh"
            + (f" -v {verify}" if verify else "") + (" -c" if check else "") + "`): the networks (model plan, onednn_auto on every "
            "layer, the best single primitive on every layer, the oracle plan from exhaustive profiling"
            + (", and the plan made with `--verify`" if verify else "")
            + (", and the plan kept by `--check`" if check else "") + ") timed "
            "interleaved end to end in one process; medians. speed-up = onednn_auto / plan; gap = plan / oracle - 1. "
            "profile/select = oracle_profile_s / select_ms. `shared/` = `../shared/networks/`; the others are the "
            "project's `networks/`. Layers: convolutions after `*N` expansion (1D/3D layers skipped).\n\n")
    f.write("## The model's plan (no measurement)\n\n")
    f.write("| network | threads | layers | plan ms | onednn_auto ms | single best ms (which) | oracle ms | "
            "speed-up | gap to oracle | select ms | oracle profiling s | profile/select |\n")
    f.write("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write(f"| {name(r)} | {r['threads']} | {r['layers']} | {r['plan_ms']:.3f} | {r['onednn_auto_ms']:.3f} | "
                f"{r['single_best_ms']:.3f} ({r['single_best']}) | {r['oracle_ms']:.3f} | "
                f"{r['speedup_vs_onednn_auto']:.3f}x | {100 * r['plan_vs_oracle']:+.1f}% | {r['select_ms']:.2f} | "
                f"{r['oracle_profile_s']:.1f} | {r['oracle_profile_s'] * 1e3 / max(r['select_ms'], 1e-3):.0f}x |\n")
    if verify:
        f.write(f"\n## With `--verify {verify}` (close calls timed, the top {verify} candidates)\n\n")
        f.write("| network | threads | verified ms | speed-up | gap to oracle | layers measured | verify s | "
                "select + verify ms | oracle profiling / (select + verify) |\n|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {name(r)} | {r['threads']} | {r['verified_ms']:.3f} | "
                    f"{r['verified_speedup_vs_onednn_auto']:.3f}x | {100 * r['verified_vs_oracle']:+.1f}% | "
                    f"{r['verified_layers']} | {r['verify_s']:.2f} | {r['verified_select_ms']:.0f} | "
                    f"{r['oracle_profile_s'] * 1e3 / max(r['verified_select_ms'], 1e-3):.0f}x |\n")
    if check:
        f.write(f"\n## With `--verify {verify} --check` (then the fastest end to end of the model's plan, the verified "
                "plan, oneDNN alone and, since session 13, the plans chosen again without each family the plan uses)\n\n"
                "The check's own end-to-end medians are in the `check_*` columns of the CSV (the JSONL has "
                "`check_without`); checked ms is the time of the row the kept plan copies (model plan, verified plan "
                "or onednn_auto), timed with the others, or, for a plan without a family, of that plan timed as a "
                "row of its own with them.\n\n"
                "| network | threads | kept | checked ms | speed-up | gap to oracle | check s |\n"
                "|---|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {name(r)} | {r['threads']} | {r['check_kept']} | {r['checked_ms']:.3f} | "
                    f"{r['checked_speedup_vs_onednn_auto']:.3f}x | {100 * r['checked_vs_oracle']:+.1f}% | "
                    f"{r['check_s']:.2f} |\n")
    # The issue's targets, checked on these rows.
    f.write("\n## Targets\n\n| target | threads | model plan | with --verify | with --verify --check |\n"
            "|---|---|---|---|---|\n")
    def pick(pred):
        return [r for r in rows if pred(name(r))]
    for t in sorted({r["threads"] for r in rows}):
        tr = [r for r in rows if r["threads"] == t]
        for label, want, nets in (("≥ 1.3× onednn_auto", 1.3, ("vgg_16", "shared/vgg_19")),
                                  ("≥ 1.1× onednn_auto", 1.1, ("resnet_50", "shared/resnet_50"))):
            sel = [r for r in tr if name(r) in nets]
            if not sel:
                continue
            a = ", ".join(f"{name(r)} {r['speedup_vs_onednn_auto']:.2f}×" for r in sel)
            b = ", ".join(f"{name(r)} {r['verified_speedup_vs_onednn_auto']:.2f}×" for r in sel) if verify else "-"
            c = ", ".join(f"{name(r)} {r['checked_speedup_vs_onednn_auto']:.2f}×" for r in sel) if check else "-"
            f.write(f"| {label} | {t} | {a} | {b} | {c} |\n")
        ok = sum(r["plan_vs_oracle"] <= 0.03 for r in tr)
        okv = sum(r["verified_vs_oracle"] <= 0.03 for r in tr) if verify else None
        okc = sum(r["checked_vs_oracle"] <= 0.03 for r in tr) if check else None
        f.write(f"| within 3% of the oracle | {t} | {ok} of {len(tr)} networks | "
                + (f"{okv} of {len(tr)}" if verify else "-") + " | " + (f"{okc} of {len(tr)}" if check else "-") + " |\n")
        slow = sum(r["speedup_vs_onednn_auto"] < 0.97 for r in tr)
        slowv = sum(r["verified_speedup_vs_onednn_auto"] < 0.97 for r in tr) if verify else None
        slowc = sum(r["checked_speedup_vs_onednn_auto"] < 0.97 for r in tr) if check else None
        f.write(f"| slower than oneDNN alone by > 3% | {t} | {slow} of {len(tr)} | "
                + (f"{slowv} of {len(tr)}" if verify else "-") + " | " + (f"{slowc} of {len(tr)}" if check else "-") + " |\n")
        rn = [r for r in tr if name(r) == "resnet_50"]
        if rn:
            f.write(f"| select_ms < 10 for ResNet-50 | {t} | {rn[0]['select_ms']:.2f} ms | "
                    + (f"{rn[0]['verified_select_ms']:.0f} ms" if verify else "-") + " | "
                    + (f"{rn[0]['checked_select_ms']:.0f} ms" if check else "-") + " |\n")
        ratios = [r["oracle_profile_s"] * 1e3 / max(r["select_ms"], 1e-3) for r in tr]
        f.write(f"| oracle profiling ≥ 10,000× select | {t} | {sum(x >= 1e4 for x in ratios)} of {len(tr)} "
                f"(min {min(ratios):.0f}×, max {max(ratios):.0f}×) | - | - |\n")
print(open(prefix + ".md").read())
PY
