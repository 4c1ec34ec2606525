#!/usr/bin/env bash
# convsel run --baseline (oneDNN alone timed beside the plans) and --plans DIR
# (the plans of a batch select run, a network at a time, and a summary): what
# is printed and written, the exit codes, a network that fails among others,
# and the options refused. Timing-free: the speed-ups are checked against the
# medians printed beside them, not for their size. $1: the convsel binary.
set -u
convsel=${1:?usage: cli_run_batch.sh path/to/convsel}
source "$(dirname "${BASH_SOURCE[0]}")/shell_lib.sh"
unset CONVSEL_ISA OPENBLAS_CORETYPE CONVSEL_MODEL

# within(r, a, b, da, db): r (printed to 3 decimals) can be a / b for the a and b printed,
# each rounded by at most da and db.
cat >"$tmp/within.py" <<'PY'
import json

def within(r, a, b, da, db):
    return (a - da) / (b + db) - 0.0005 <= r <= (a + da) / max(b - db, 1e-12) + 0.0005

def differing(file_a, file_b):
    """The layers two plan files choose otherwise (primitive or layouts), and whether they run alike."""
    a, b = json.load(open(file_a)), json.load(open(file_b))
    if a["threads"] != b["threads"]:
        return len(a["layers"]), False
    key = lambda l: (l["primitive"], l["src_layout"], l["dst_layout"])
    n = sum(key(x) != key(y) for x, y in zip(a["layers"], b["layers"]))
    return n, n == 0 and a["boundary_layout"] == b["boundary_layout"]
PY
export PYTHONPATH="$tmp"
mkdir -p "$tmp/nets"
cat >"$tmp/nets/tiny.txt" <<'EOF'
mb1ic8ih16oc16oh16kh3ph1n"tiny:a"
mb1ic16ih16oc16oh8kh3sh2ph1n"tiny:b"
g8mb1ic8ih10oc8oh10kh3ph1n"tiny:e*2"
EOF
printf 'mb1ic8ih8oc8oh8kh3ph1n"small:a"\nmb1ic8ih8oc16oh8kh1ph0n"small:b"\n' >"$tmp/nets/a_small.txt"
printf 'not a network\n' >"$tmp/nets/notes.md"
expect_rc 0 select --net "$tmp/nets" -o "$tmp/plans" --quiet
[ -s "$tmp/plans/tiny.plan.json" ] && [ -s "$tmp/plans/a_small.plan.json" ] || die "select wrote no plans: $(cat "$tmp/err")"

# One plan and oneDNN alone: both timed, the speed-up their ratio.
expect_rc 0 run --net "$tmp/nets/tiny.txt" --plan "$tmp/plans/tiny.plan.json" --baseline --max-time 0.1
grep -q '^network tiny: 4 layers, mb1; 1 plan and oneDNN alone timed interleaved' "$tmp/out" ||
    fail "run --baseline, the header: $(cat "$tmp/out")"
grep -q '^oneDNN alone (onednn_auto on every layer): 1 thread, ' "$tmp/out" ||
    fail "run --baseline, no oneDNN alone row: $(cat "$tmp/out")"
python3 - "$tmp/out" <<'PY' || fail "run --baseline, the speed-up: $(cat "$tmp/out")"
import re, sys
from within import within
text = open(sys.argv[1]).read()
medians = [float(m) for m in re.findall(r"^  median ([0-9.]+) ms", text, re.M)]
speedup = float(re.search(r"^speed-up over oneDNN alone: ([0-9.]+)x$", text, re.M).group(1))
assert len(medians) == 2, medians
assert within(speedup, medians[1], medians[0], 0.0005, 0.0005), (speedup, medians)
PY

# The same in JSON, and with two plans: each plan's speed-up over the one oneDNN alone.
expect_rc 0 run --net "$tmp/nets/tiny.txt" --plan "$tmp/plans/tiny.plan.json" --baseline --max-time 0.1 --json
python3 - "$tmp/out" "$tmp/plans/tiny.plan.json" <<'PY' || fail "run --baseline --json: $(cat "$tmp/out")"
import json, sys
from within import within
row = json.loads(open(sys.argv[1]).read())
assert row["network"] == "tiny" and row["plan"] == sys.argv[2] and row["layers"] == 4, row
assert row["onednn_auto_ms"] > 0 and row["median_ms"] > 0, row
assert row["onednn_auto_reference_layers"] == 0 and row["onednn_auto_interleaved"] is True, row
assert within(row["speedup_vs_onednn_auto"], row["onednn_auto_ms"], row["median_ms"], 5e-5, 5e-5), row
PY
expect_rc 0 select --net "$tmp/nets/tiny.txt" --exclude winograd,direct_simd -o "$tmp/tiny_ex.json" --quiet
expect_rc 0 run --net "$tmp/nets/tiny.txt" --plan "$tmp/plans/tiny.plan.json" --plan "$tmp/tiny_ex.json" --baseline \
    --max-time 0.1 --json
python3 - "$tmp/out" <<'PY' || fail "run --baseline with two plans, JSON: $(cat "$tmp/out")"
import json, sys
from within import within
row = json.loads(open(sys.argv[1]).read())
assert len(row["plans"]) == 2, row  # oneDNN alone is not one of the plans
for p in row["plans"]:
    assert within(p["speedup_vs_onednn_auto"], row["onednn_auto_ms"], p["median_ms"], 5e-5, 5e-5), p
PY
expect_rc 0 run --net "$tmp/nets/tiny.txt" --plan "$tmp/plans/tiny.plan.json" --plan "$tmp/tiny_ex.json" --baseline \
    --max-time 0.1 --check
grep -Eq '^speed-up over oneDNN alone: plan 1 [0-9.]+x, plan 2 [0-9.]+x$' "$tmp/out" ||
    fail "run --baseline with two plans: $(cat "$tmp/out")"
[ "$(grep -c '^  checked: every layer matches' "$tmp/out")" = 2 ] ||
    fail "run --baseline --check: want the two plans checked, not oneDNN alone: $(cat "$tmp/out")"
# oneDNN alone runs at the plan's threads.
expect_rc 0 select --net "$tmp/nets/tiny.txt" --threads 2 -o "$tmp/tiny_t2.json" --quiet
expect_rc 0 run --net "$tmp/nets/tiny.txt" --plan "$tmp/tiny_t2.json" --baseline --max-time 0.1
grep -q '^oneDNN alone (onednn_auto on every layer): 2 threads, ' "$tmp/out" ||
    fail "run --baseline of a 2-thread plan: $(cat "$tmp/out")"

# A batch: every network of the directory (*.txt only) with its plan, a summary, the geometric mean.
expect_rc 0 run --net "$tmp/nets" --plans "$tmp/plans" --baseline --max-time 0.1
grep -q "^== a_small ($tmp/nets/a_small.txt)$" "$tmp/out" && grep -q "^== tiny ($tmp/nets/tiny.txt)$" "$tmp/out" ||
    fail "run --plans, the headers: $(cat "$tmp/out")"
grep -q "notes" "$tmp/out" && fail "run --plans read notes.md: $(cat "$tmp/out")"
grep -q '^2 networks: 2 run, 0 failed$' "$tmp/out" || fail "run --plans, the count: $(cat "$tmp/out")"
python3 - "$tmp/out" "$tmp/plans" <<'PY' || fail "run --plans, the summary: $(cat "$tmp/out")"
import math, re, sys
from within import within
text, plans = open(sys.argv[1]).read(), sys.argv[2]
rows = re.findall(r"^(\w+) +(\d+) +([0-9.]+) +([0-9.]+) +([0-9.]+)x (\S+)$", text, re.M)
assert [r[0] for r in rows] == ["a_small", "tiny"], rows
assert [r[1] for r in rows] == ["2", "4"], rows
assert [r[5] for r in rows] == [plans + "/a_small.plan.json", plans + "/tiny.plan.json"], rows
speedups = [float(r[4]) for r in rows]
for r, s in zip(rows, speedups):
    assert within(s, float(r[3]), float(r[2]), 5e-5, 5e-5), r
# Each network's own block says the same speed-up as its summary row.
blocks = [float(v) for v in re.findall(r"^speed-up over oneDNN alone: ([0-9.]+)x$", text, re.M)]
assert blocks == speedups, (blocks, speedups)
m = re.search(r"^speed-up over oneDNN alone: median ([0-9.]+)x, geometric mean ([0-9.]+)x over 2 networks$", text, re.M)
median, mean = float(m.group(1)), float(m.group(2))
assert abs(mean - math.sqrt(speedups[0] * speedups[1])) <= 0.0015, (mean, speedups)
assert abs(median - (speedups[0] + speedups[1]) / 2) <= 0.0015, (median, speedups)
assert "reference loops" not in text, text
PY
# --net repeated works as the directory does; without --baseline no speed-up column.
expect_rc 0 run --net "$tmp/nets/tiny.txt" --net "$tmp/nets/a_small.txt" --plans "$tmp/plans" --max-time 0.1
grep -q '^2 networks: 2 run, 0 failed$' "$tmp/out" || fail "run --plans with --net twice: $(cat "$tmp/out")"
grep -q 'oneDNN alone\|speed-up' "$tmp/out" && fail "run --plans without --baseline timed oneDNN alone: $(cat "$tmp/out")"
# JSON: a line per network.
expect_rc 0 run --net "$tmp/nets" --plans "$tmp/plans" --baseline --max-time 0.1 --json
python3 - "$tmp/out" <<'PY' || fail "run --plans --json: $(cat "$tmp/out")"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert [r["network"] for r in rows] == ["a_small", "tiny"], rows
assert all(r["onednn_auto_ms"] > 0 and r["speedup_vs_onednn_auto"] > 0 for r in rows), rows
PY

# Several --plans DIRs: each network's plans of every DIR timed interleaved, a column each, and
# the later DIRs against the first (here the plans made without our own kernels).
expect_rc 0 select --net "$tmp/nets" --exclude winograd,direct_simd -o "$tmp/plans_ex" --quiet
expect_rc 0 run --net "$tmp/nets" --plans "$tmp/plans" --plans "$tmp/plans_ex" --baseline --max-time 0.1
grep -q "^plans 1: $tmp/plans/NAME.plan.json$" "$tmp/out" && grep -q "^plans 2: $tmp/plans_ex/NAME.plan.json$" "$tmp/out" ||
    fail "run --plans twice, the legend: $(cat "$tmp/out")"
grep -q "^plan 1 $tmp/plans/tiny.plan.json: " "$tmp/out" && grep -q "^plan 2 $tmp/plans_ex/tiny.plan.json: " "$tmp/out" ||
    fail "run --plans twice, tiny's two plans not timed together: $(cat "$tmp/out")"
python3 - "$tmp/out" "$tmp/plans" "$tmp/plans_ex" <<'PY2' || fail "run --plans twice, the summary: $(cat "$tmp/out")"
import math, re, sys
from within import within
text, d1, d2 = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3]
assert re.search(r"^network +layers +plan1_ms +plan2_ms +onednn_ms +speed-up1 +speed-up2$", text, re.M), text
rows = re.findall(r"^(\w+) +(\d+) +([0-9.]+) +([0-9.]+) +([0-9.]+) +([0-9.]+)x +([0-9.]+)x$", text, re.M)
assert [r[0] for r in rows] == ["a_small", "tiny"], rows
ms = [(float(r[2]), float(r[3])) for r in rows]
alone = [float(r[4]) for r in rows]
for r, (a, b), o in zip(rows, ms, alone):
    assert within(float(r[5]), o, a, 5e-5, 5e-5) and within(float(r[6]), o, b, 5e-5, 5e-5), r
# Each DIR's speed-ups, and the rows' in each network's own block.
for d, col, name in ((1, 5, d1), (2, 6, d2)):
    s = [float(r[col]) for r in rows]
    m = re.search(r"^speed-up over oneDNN alone, plans %d \(%s\): median ([0-9.]+)x, geometric mean ([0-9.]+)x "
                  r"over 2 networks$" % (d, re.escape(name)), text, re.M)
    assert abs(float(m.group(1)) - (s[0] + s[1]) / 2) <= 0.0015, (m.group(0), s)
    assert abs(float(m.group(2)) - math.sqrt(s[0] * s[1])) <= 0.0015, (m.group(0), s)
    slower = [n for n, v in zip(("a_small", "tiny"), s) if v < 1]
    line = re.search(r"^slower than oneDNN alone, plans %d \(%s\): (.*)$" % (d, re.escape(name)), text, re.M).group(1)
    assert (line == "none") == (not slower) and all(n + " (" in line for n in slower), (line, s)
blocks = re.findall(r"^speed-up over oneDNN alone: plan 1 ([0-9.]+)x, plan 2 ([0-9.]+)x$", text, re.M)
assert [(float(a), float(b)) for a, b in blocks] == [(float(r[5]), float(r[6])) for r in rows], (blocks, rows)
# The second DIR against the first: the time ratios' median and geometric mean, and the counts.
ratio = [b / a for a, b in ms]
m = re.search(r"^plans 2 \(%s\) against plans 1 \(%s\): time ratio median ([0-9.]+)x, geometric mean ([0-9.]+)x over "
              r"2 networks; faster on (\d), slower on (\d)$" % (re.escape(d2), re.escape(d1)), text, re.M)
lo = [(b - 5e-5) / (a + 5e-5) for a, b in ms]
hi = [(b + 5e-5) / (a - 5e-5) for a, b in ms]
assert (lo[0] + lo[1]) / 2 - 0.0015 <= float(m.group(1)) <= (hi[0] + hi[1]) / 2 + 0.0015, (m.group(0), ms)
assert math.sqrt(lo[0] * lo[1]) - 0.0015 <= float(m.group(2)) <= math.sqrt(hi[0] * hi[1]) + 0.0015, (m.group(0), ms)
faster, slower = int(m.group(3)), int(m.group(4))
assert faster + slower <= 2 and faster >= sum(h < 1 for h in hi) and slower >= sum(l > 1 for l in lo), (m.group(0), ms)
PY2
# Without --baseline: the time ratio column; JSON: both plans of each network.
expect_rc 0 run --net "$tmp/nets" --plans "$tmp/plans" --plans "$tmp/plans_ex" --max-time 0.1
grep -Eq '^network +layers +plan1_ms +plan2_ms +2_vs_1$' "$tmp/out" && grep -Eq '^tiny +4 +[0-9.]+ +[0-9.]+ +[0-9.]+x$' "$tmp/out" ||
    fail "run --plans twice without --baseline, the table: $(cat "$tmp/out")"
grep -q 'oneDNN alone' "$tmp/out" && fail "run --plans twice without --baseline timed oneDNN alone: $(cat "$tmp/out")"
grep -q "^plans 2 ($tmp/plans_ex) against plans 1 ($tmp/plans): time ratio median " "$tmp/out" &&
    grep -q "^  the same choices as plans 1 on [0-2] of them" "$tmp/out" ||
    fail "run --plans twice without --baseline, the comparison: $(cat "$tmp/out")"
expect_rc 0 run --net "$tmp/nets" --plans "$tmp/plans" --plans "$tmp/plans_ex" --baseline --max-time 0.1 --json
python3 - "$tmp/out" "$tmp/plans" "$tmp/plans_ex" <<'PY2' || fail "run --plans twice --json: $(cat "$tmp/out")"
import json, sys
from within import differing
rows = [json.loads(line) for line in open(sys.argv[1])]
assert [r["network"] for r in rows] == ["a_small", "tiny"], rows
for r in rows:
    want = [d + "/" + r["network"] + ".plan.json" for d in sys.argv[2:]]
    assert [p["plan"] for p in r["plans"]] == want and r["onednn_auto_ms"] > 0, r
    n, alike = differing(*want)
    second = r["plans"][1]
    assert second["same_as_first"] is alike and second["layers_differing_from_first"] == n, (r, n, alike)
    assert "same_as_first" not in r["plans"][0], r
PY2
# Which plans make the first DIR's choices: said per plan and counted, and the ratio given again
# over the networks whose plans differ. plans_mix: a_small's plan is the first DIR's, tiny's a
# 2-thread plan, which differs on any CPU.
mkdir -p "$tmp/plans_mix"
cp "$tmp/plans/a_small.plan.json" "$tmp/plans_mix/"
cp "$tmp/tiny_t2.json" "$tmp/plans_mix/tiny.plan.json"
expect_rc 0 run --net "$tmp/nets" --plans "$tmp/plans" --plans "$tmp/plans_mix" --max-time 0.1
grep -q "^plan 2 $tmp/plans_mix/a_small.plan.json: 1 thread, [0-9]* reorders, the same choices as plan 1$" "$tmp/out" &&
    grep -q "^plan 2 $tmp/plans_mix/tiny.plan.json: 2 threads, [0-9]* reorders, other threads than plan 1$" "$tmp/out" ||
    fail "run --plans twice, the plans' differences: $(cat "$tmp/out")"
python3 - "$tmp/out" <<'PY2' || fail "run --plans twice, the ratio over the plans that differ: $(cat "$tmp/out")"
import re, sys
text = open(sys.argv[1]).read()
tiny = float(re.search(r"^tiny +4 +[0-9.]+ +[0-9.]+ +([0-9.]+)x$", text, re.M).group(1))
m = re.search(r"^  the same choices as plans 1 on 1 of them; over the 1 whose plans differ: median ([0-9.]+)x, "
              r"geometric mean ([0-9.]+)x$", text, re.M)
assert float(m.group(1)) == tiny and float(m.group(2)) == tiny, (m.group(0), tiny)
PY2
# A DIR lacking a network's plan fails that network, not the others.
mkdir -p "$tmp/plans_part"
cp "$tmp/plans_ex/tiny.plan.json" "$tmp/plans_part/"
expect_rc 1 run --net "$tmp/nets" --plans "$tmp/plans" --plans "$tmp/plans_part" --max-time 0.1
grep -q "$tmp/plans_part/a_small.plan.json: No such file or directory" "$tmp/err" ||
    fail "run --plans twice, a missing plan: $(cat "$tmp/err")"
grep -q '^2 networks: 1 run, 1 failed$' "$tmp/out" && grep -q "over 1 network; faster on" "$tmp/out" ||
    fail "run --plans twice with a failure: $(cat "$tmp/out")"

# A network that fails is said, the others still run, and the exit status is its: a missing
# plan, and a plan of another network under this one's name.
mkdir -p "$tmp/plans_bad"
cp "$tmp/plans/tiny.plan.json" "$tmp/plans_bad/a_small.plan.json"
cp "$tmp/plans/tiny.plan.json" "$tmp/plans_bad/tiny.plan.json"
cp "$tmp/nets/tiny.txt" "$tmp/nets/b_tiny.txt"
expect_rc 1 run --net "$tmp/nets" --plans "$tmp/plans_bad" --baseline --max-time 0.1
grep -q "plan $tmp/plans_bad/a_small.plan.json was not made for network $tmp/nets/a_small.txt" "$tmp/err" ||
    fail "run --plans, another network's plan: $(cat "$tmp/err")"
grep -q "$tmp/plans_bad/b_tiny.plan.json: No such file or directory" "$tmp/err" ||
    fail "run --plans, a missing plan: $(cat "$tmp/err")"
grep -q '^3 networks: 1 run, 2 failed$' "$tmp/out" || fail "run --plans with failures, the count: $(cat "$tmp/out")"
grep -q "^a_small .*failed ($tmp/nets/a_small.txt)$" "$tmp/out" && grep -q "^b_tiny .*failed" "$tmp/out" ||
    fail "run --plans with failures, the rows: $(cat "$tmp/out")"
grep -q "^tiny .*$tmp/plans_bad/tiny.plan.json$" "$tmp/out" || fail "run --plans: a failure cost tiny its run: $(cat "$tmp/out")"
grep -q "geometric mean [0-9.]*x over 1 network$" "$tmp/out" || fail "run --plans, the mean over the networks run: $(cat "$tmp/out")"
rm "$tmp/nets/b_tiny.txt"

# A layer where onednn_auto runs oneDNN's reference loops (512 channels in 128 groups, on this
# CPU; predict says where): the network is marked, said, and left out of the second mean.
ref_layer='g128mb1ic512ih8oc512oh4kh3sh2dh0ph1'
expect_rc 0 predict "$ref_layer"
if grep -q "onednn_auto .*runs the library's reference loops here" "$tmp/out"; then
    mkdir -p "$tmp/nets_ref"
    cp "$tmp/nets/tiny.txt" "$tmp/nets_ref/"
    printf '%sn"ref:a"\nmb1ic8ih8oc8oh8kh3ph1n"ref:b"\n' "$ref_layer" >"$tmp/nets_ref/ref.txt"
    expect_rc 0 select --net "$tmp/nets_ref" -o "$tmp/plans_ref" --quiet
    expect_rc 0 run --net "$tmp/nets_ref" --plans "$tmp/plans_ref" --baseline --max-time 0.1
    # oneDNN alone's rounds take 100x the plans': it is timed after them, on its own.
    grep -q "^oneDNN alone runs oneDNN's reference loops on 1 of the 2 layers; it was timed after the plan, on its own, not in the plan's rounds$" "$tmp/out" &&
        grep -q "^network ref: 2 layers, mb1; 1 plan timed first, then oneDNN alone in the same process$" "$tmp/out" ||
        fail "run --baseline, the reference loops unsaid: $(cat "$tmp/out")"
    grep -q "^network tiny: 4 layers, mb1; 1 plan and oneDNN alone timed interleaved in one process" "$tmp/out" ||
        fail "run --baseline, tiny's oneDNN alone not interleaved: $(cat "$tmp/out")"
    grep -q "^ref .*x\* $tmp/plans_ref/ref.plan.json$" "$tmp/out" || fail "run --plans, ref not marked: $(cat "$tmp/out")"
    grep -q "^tiny .*[0-9]x $tmp/plans_ref/tiny.plan.json$" "$tmp/out" || fail "run --plans, tiny marked: $(cat "$tmp/out")"
    grep -q "^speed-up over oneDNN alone: median [0-9.]*x, geometric mean [0-9.]*x over 2 networks$" "$tmp/out" &&
        grep -q "^\* oneDNN alone runs oneDNN's reference loops on some layers; without those networks: median [0-9.]*x, geometric mean [0-9.]*x over 1 network$" "$tmp/out" ||
        fail "run --plans, the means with and without reference loops: $(cat "$tmp/out")"
    expect_rc 0 run --net "$tmp/nets_ref/ref.txt" --plans "$tmp/plans_ref" --baseline --max-time 0.1 --json
    grep -q '"onednn_auto_reference_layers": 1, "onednn_auto_interleaved": false, ' "$tmp/out" ||
        fail "run --baseline --json, reference layers: $(cat "$tmp/out")"
    # Two plans: timed interleaved among themselves, oneDNN alone after them.
    expect_rc 0 run --net "$tmp/nets_ref/ref.txt" --plan "$tmp/plans_ref/ref.plan.json" \
        --plan "$tmp/plans_ref/ref.plan.json" --baseline --max-time 0.1
    grep -q "^network ref: 2 layers, mb1; 2 plans timed interleaved, then oneDNN alone in the same process$" "$tmp/out" &&
        grep -q "it was timed after the plans, on its own, not in their rounds$" "$tmp/out" &&
        grep -Eq '^speed-up over oneDNN alone: plan 1 [0-9.]+x, plan 2 [0-9.]+x$' "$tmp/out" ||
        fail "run --baseline, two plans, reference loops: $(cat "$tmp/out")"
else
    echo "note: onednn_auto runs no reference loops on $ref_layer on this CPU; their marking not tested"
fi

# Refused before any work.
expect_rc 2 run --net "$tmp/nets" --plans "$tmp/missing"
grep -q "'$tmp/missing' is not a directory" "$tmp/err" || fail "run --plans MISSING: $(cat "$tmp/err")"
expect_rc 2 run --net "$tmp/nets/tiny.txt" --plans "$tmp/plans/tiny.plan.json"
grep -q "is not a directory" "$tmp/err" || fail "run --plans FILE: $(cat "$tmp/err")"
expect_rc 2 run --net "$tmp/nets" --plans "$tmp/plans" --plans "$tmp/missing"
grep -q "'$tmp/missing' is not a directory" "$tmp/err" || fail "run --plans DIR --plans MISSING: $(cat "$tmp/err")"
nine=()
for _ in 1 2 3 4 5 6 7 8 9; do nine+=(--plans "$tmp/plans"); done
expect_rc 2 run --net "$tmp/nets" "${nine[@]}"
grep -q "at most 8 --plans directories" "$tmp/err" || fail "run with nine --plans: $(cat "$tmp/err")"
expect_rc 2 run --net "$tmp/nets/tiny.txt" --plans "$tmp/plans" --plan "$tmp/plans/tiny.plan.json"
grep -q "not both" "$tmp/err" || fail "run --plan and --plans: $(cat "$tmp/err")"
expect_rc 2 run --net "$tmp/nets" --plan "$tmp/plans/tiny.plan.json"
grep -q "several networks take --plans DIR" "$tmp/err" || fail "run --net DIR --plan: $(cat "$tmp/err")"
expect_rc 2 run --net "$tmp/nets/tiny.txt" --plan "$tmp/plans/tiny.plan.json" --model models/default.msgpack
grep -q "it goes with --baseline" "$tmp/err" || fail "run --model without --baseline: $(cat "$tmp/err")"
expect_rc 1 run --net "$tmp/nets/tiny.txt" --plan "$tmp/plans/tiny.plan.json" --baseline --model "$tmp/no_model.msgpack"
grep -q "no_model.msgpack" "$tmp/err" || fail "run --baseline --model MISSING: $(cat "$tmp/err")"
expect_rc 2 run --net "$tmp/nets/tiny.txt" --plans "$tmp/plans" --bogus
grep -q "unknown argument '--bogus'" "$tmp/err" || fail "run --bogus: $(cat "$tmp/err")"

finish cli_run_batch
