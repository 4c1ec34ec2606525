#!/usr/bin/env bash
# What the runner's shared workspace saves, per network: the model's plan and oneDNN alone
# (onednn_auto on every layer), each run with one workspace for all layers and with a workspace
# per layer, interleaved in one process with a second shared copy as the control
# (build/runner_workspace).
#
#   bash bench/runner_workspace.sh [-t THREADS] [-s SECONDS] [-m MODEL] -o PREFIX NETWORK_FILE...
#
# Writes PREFIX.jsonl (runner_workspace's lines, with "net" and "plan_kind" added) and PREFIX.md.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd_repo_root
usage="usage: bash bench/runner_workspace.sh [-t THREADS] [-s SECONDS] [-m MODEL] -o PREFIX NETWORK_FILE..."
threads=1 seconds=6 model='' prefix=''
while getopts "t:s:m:o:" opt; do
    case $opt in
    t) threads=$OPTARG ;;
    s) seconds=$OPTARG ;;
    m) model=$OPTARG ;;
    o) prefix=$OPTARG ;;
    *) die 2 "$usage" ;;
    esac
done
shift $((OPTIND - 1))
[[ -n $prefix && $# -ge 1 ]] || die 2 "$usage"
[[ $threads =~ ^[1-9][0-9]*$ ]] || die 2 "runner_workspace: -t takes a whole number"
require_built build/convsel
require_built build/runner_workspace
make_tmp
model_args=()
[[ -n $model ]] && model_args=(--model "$model")
# Everything but onednn_auto, by family and name: what is left is oneDNN alone.
not_auto=onednn_direct,onednn_winograd,onednn_gemm,gemm,direct,winograd
: >"$prefix.jsonl"
for net in "$@"; do
    name=$(basename "$net" .txt)
    for kind in model onednn_auto; do
        exclude=()
        [[ $kind == onednn_auto ]] && exclude=(--exclude "$not_auto")
        build/convsel select --net "$net" --mb 1 --threads "$threads" "${model_args[@]}" "${exclude[@]}" --quiet \
            -o "$tmp/$name.$kind.plan.json" >/dev/null || die 1 "runner_workspace: select failed on $net"
        if line=$(build/runner_workspace --max-time "$seconds" "$tmp/$name.$kind.plan.json"); then
            printf '%s\n' "${line%\}}, \"net\": \"$name\", \"plan_kind\": \"$kind\"}" >>"$prefix.jsonl"
        else
            die 1 "runner_workspace: failed on $net ($kind)"
        fi
    done
done
python3 - "$prefix.jsonl" "$threads" "$seconds" "$(cpu_model)" "$(date -u '+%Y-%m-%d %H:%M UTC')" >"$prefix.md" <<'EOF'
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"# One workspace for all layers against one per layer, {sys.argv[2]} thread(s)\n")
print(f"CPU: {sys.argv[4]}; {sys.argv[5]}.\n")
print(f"`build/runner_workspace --max-time {sys.argv[3]}`: each plan instantiated three times in one process,")
print("shared, private and shared again (the control), run interleaved; medians over the runs.")
print("private / shared > 1: sharing is faster; control / shared: what two identical runners differ")
print("by here. Workspace: the memory the layers' workspaces take.\n")
print("| network | plan | runs | shared ms | private ms | private / shared | control / shared | workspace shared MB | private MB |")
print("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['net']} | {r['plan_kind']} | {r['runs']} | {r['shared_ms']:.3f} | {r['private_ms']:.3f} | "
          f"{r['private_over_shared']:.3f} | {r['control_over_shared']:.3f} | {r['shared_bytes'] / 2**20:.1f} | "
          f"{r['private_bytes'] / 2**20:.1f} |")
def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))
for kind in ("model", "onednn_auto"):
    sel = [r for r in rows if r["plan_kind"] == kind]
    if sel:
        p = [r["private_over_shared"] for r in sel]
        c = [r["control_over_shared"] for r in sel]
        print(f"\n{kind}, {len(sel)} networks: private / shared geometric mean {gm(p):.3f} "
              f"(range {min(p):.3f}-{max(p):.3f}); control / shared {gm(c):.3f} ({min(c):.3f}-{max(c):.3f})")
EOF
cat "$prefix.md"
