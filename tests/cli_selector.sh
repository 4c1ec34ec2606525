#!/usr/bin/env bash
# convsel select, run and compare on a tiny network with the shipped model:
# exit codes, what the plan, the table and the JSON contain, and the errors a
# user meets (missing file, impossible layer, nothing left to choose, a plan
# for another network or CPU). Timing-free: it checks what was printed and
# written, not how fast anything ran. $1: the convsel binary.
set -u
convsel=${1:?usage: cli_selector.sh path/to/convsel}
source "$(dirname "${BASH_SOURCE[0]}")/shell_lib.sh"
unset CONVSEL_ISA OPENBLAS_CORETYPE CONVSEL_MODEL

# Layers that connect (a -> b -> c), one that does not (d), a repeat (e*2).
cat >"$tmp/tiny.txt" <<'EOF'
mb1ic8ih16oc16oh16kh3ph1n"tiny:a"
mb1ic16ih16oc16oh8kh3sh2ph1n"tiny:b"
mb1ic16ih8oc32oh8kh1ph0n"tiny:c"
mb1ic24ih10oc8oh10kh3ph1n"tiny:d"
g8mb1ic8ih10oc8oh10kh3ph1n"tiny:e*2"
EOF

# select: table, plan file, every layer named.
expect_rc 0 select --net "$tmp/tiny.txt" --threads 1 -o "$tmp/plan.json"
for layer in tiny:a tiny:b tiny:c tiny:d tiny:e; do
    grep -q "$layer" "$tmp/out" || fail "select's table lacks $layer: $(cat "$tmp/out")"
done
[ -s "$tmp/plan.json" ] || fail "select -o wrote no plan"
n=$(grep -o '"primitive"' "$tmp/plan.json" | wc -l)
[ "$n" -eq 6 ] || fail "plan has $n layers' primitives, want 6 (e*2 expands to two layers)"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/plan.json" 2>"$tmp/err" ||
    fail "plan is not JSON: $(cat "$tmp/err")"

# --exclude and --max-error change what may be chosen.
expect_rc 0 select --net "$tmp/tiny.txt" --exclude winograd,direct_simd -o "$tmp/plan_ex.json" --quiet
grep -Eq '"primitive": *"(winograd|direct_simd)' "$tmp/plan_ex.json" && fail "--exclude winograd,direct_simd ignored"
expect_rc 0 select --net "$tmp/tiny.txt" --max-error 3e-6 -o "$tmp/plan_me.json" --quiet
grep -Eq '"primitive": *"(winograd_|onednn_winograd)' "$tmp/plan_me.json" && fail "--max-error 3e-6 kept a Winograd primitive"

# run: the plan end to end.
expect_rc 0 run --net "$tmp/tiny.txt" --plan "$tmp/plan.json" --max-time 0.2 --json
grep -q '"median_ms": [0-9]' "$tmp/out" || fail "run --json lacks median_ms: $(cat "$tmp/out")"
expect_rc 0 run --net "$tmp/tiny.txt" --plan "$tmp/plan.json" --max-time 0.1 --check
grep -q '^checked: every layer matches the reference' "$tmp/out" || fail "run --check: $(cat "$tmp/out")"
expect_rc 0 run --net "$tmp/tiny.txt" --plan "$tmp/plan.json" --max-time 0.1 --check --json
grep -q '"checked": true, "worst_error_of_bound": [0-9]' "$tmp/out" || fail "run --check --json: $(cat "$tmp/out")"

# run with several plans: each timed interleaved (its own runner), ratios against the first. The
# same plan given twice must come back as two entries; --check checks every plan.
expect_rc 0 run --net "$tmp/tiny.txt" --plan "$tmp/plan.json" --plan "$tmp/plan_ex.json" --plan "$tmp/plan.json" \
    --max-time 0.1 --json
python3 - "$tmp/out" "$tmp/plan.json" "$tmp/plan_ex.json" <<'PY' || fail "run with three plans: $(cat "$tmp/out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r['network'] == 'tiny' and r['mb'] == 1 and r['layers'] == 6, r
ps = r['plans']
assert [p['plan'] for p in ps] == [sys.argv[2], sys.argv[3], sys.argv[2]], ps
assert ps[0]['vs_first'] == 1.0, ps[0]
for p in ps:
    assert p['median_ms'] > 0 and p['min_ms'] <= p['median_ms'] <= p['p90_ms'] and p['runs'] >= 5, p
    # the medians are printed to 0.1 us: their ratio agrees with vs_first to within that rounding
    assert abs(p['vs_first'] - p['median_ms'] / ps[0]['median_ms']) <= 0.01 * p['vs_first'] + 1e-3, p
    assert p['threads'] == 1 and p['reorders'] >= 0 and 'checked' not in p, p
PY
expect_rc 0 run --net "$tmp/tiny.txt" --plan "$tmp/plan.json" --plan "$tmp/plan_ex.json" --max-time 0.1 --check
[ "$(grep -c '^  checked: every layer matches the reference' "$tmp/out")" -eq 2 ] ||
    fail "run --check with two plans: want two checked lines: $(cat "$tmp/out")"
grep -q '^plan 2 .*plan_ex.json: 1 thread, ' "$tmp/out" || fail "run with two plans: plan 2 not named: $(cat "$tmp/out")"
grep -Eq "^  median [0-9.]+ ms .*, [0-9.]+x plan 1's$" "$tmp/out" || fail "run with two plans: no ratio: $(cat "$tmp/out")"
expect_rc 0 select --net "$tmp/tiny.txt" --mb 2 --quiet -o "$tmp/plan_mb2.json"
expect_rc 1 run --net "$tmp/tiny.txt" --plan "$tmp/plan.json" --plan "$tmp/plan_mb2.json" --max-time 0.1
grep -q "plan_mb2.json is at mb2" "$tmp/err" || fail "plans at two batches: not said: $(cat "$tmp/err")"
expect_rc 1 run --net "$tmp/tiny.txt" --plan "$tmp/plan.json" --plan "$tmp/missing_plan.json" --max-time 0.1
grep -q "missing_plan.json" "$tmp/err" || fail "missing second plan not named: $(cat "$tmp/err")"
many=()
for i in 1 2 3 4 5 6 7 8 9; do many+=(--plan "$tmp/plan.json"); done
expect_rc 2 run --net "$tmp/tiny.txt" "${many[@]}" --max-time 0.1
grep -q "at most 8 --plan" "$tmp/err" || fail "nine plans: the limit not said: $(cat "$tmp/err")"

# compare, with the verified plan too: every key the issue names.
expect_rc 0 compare --net "$tmp/tiny.txt" --threads 1 --verify 2 --max-time 0.3 --profile-time 0.02 --json
for key in plan_ms onednn_auto_ms single_best_ms single_best oracle_ms select_ms oracle_profile_s verified_ms \
    verify_s verified_layers; do
    grep -q "\"$key\": " "$tmp/out" || fail "compare --json lacks $key: $(cat "$tmp/out")"
done
python3 - "$tmp/out" <<'PY' || fail "compare --json values: $(cat "$tmp/out")"
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("plan_ms", "onednn_auto_ms", "single_best_ms", "oracle_ms", "verified_ms", "oracle_profile_s"):
    assert r[k] > 0, k
assert r["layers"] == 6, r["layers"]
assert 0 <= r["verified_layers"] <= 6
assert r["verify_in_place"] == 1, "--verify measures in place by default"
PY
# --alone: the candidates' times alone decide, as before session 26.
expect_rc 0 compare --net "$tmp/tiny.txt" --threads 1 --verify 2 --alone --max-time 0.3 --profile-time 0.02 --json
grep -q '"verify_in_place": 0,' "$tmp/out" || fail "compare --alone: $(cat "$tmp/out")"
expect_rc 0 select --net "$tmp/tiny.txt" --verify 2 --alone --quiet

# --check: select says which plan it kept and writes that plan; compare times it too.
expect_rc 0 select --net "$tmp/tiny.txt" --verify 2 --check --check-time 0.1 -o "$tmp/plan_ck.json"
grep -Eq "kept the (model plan|verified plan|oneDNN alone|plan without the [a-z]+ family)$" "$tmp/out" ||
    fail "select --check names no kept plan: $(cat "$tmp/out")"
if grep -q "kept the oneDNN alone" "$tmp/out"; then
    n=$(grep -o '"primitive": *"onednn_auto"' "$tmp/plan_ck.json" | wc -l)
    [ "$n" -eq 6 ] || fail "select --check kept oneDNN alone but the plan has $n onednn_auto layers, want 6"
fi
# A plan kept without a family has none of that family's primitives.
family=$(sed -n 's/.*kept the plan without the \([a-z]*\) family$/\1/p' "$tmp/out")
if [ -n "$family" ]; then
    "$convsel" primitives | awk -v f="$family" '$2 == f { print $1 }' >"$tmp/family.txt"
    [ -s "$tmp/family.txt" ] || fail "no primitive of family '$family'"
    while read -r prim; do
        grep -q "\"primitive\": *\"$prim\"" "$tmp/plan_ck.json" && fail "the plan without $family uses $prim"
    done <"$tmp/family.txt"
fi
expect_rc 0 compare --net "$tmp/tiny.txt" --check --check-time 0.1 --max-time 0.3 --profile-time 0.02 --json
python3 - "$tmp/out" <<'PY' || fail "compare --check --json values: $(cat "$tmp/out")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["checked_ms"] > 0 and r["check_s"] > 0
kept = r["check_kept"]
fams = r["check_without"]
assert all(f in ("gemm", "direct", "winograd") and t >= 0 for f, t in fams.items()), fams
assert kept in ("model plan", "verified plan", "oneDNN alone") or \
    (kept.startswith("plan without the ") and kept.split()[3] in fams), kept
# The checked plan is a copy of one timed row and reports that row's time (no
# --verify here: a kept verified plan is the model's plan again); a plan
# without a family is timed as a row of its own.
if not kept.startswith("plan without"):
    same = r["onednn_auto_ms"] if kept == "oneDNN alone" else r["plan_ms"]
    assert r["checked_ms"] == same, (r["checked_ms"], same)
PY
# --plans DIR: every timed plan, loadable and runnable, with a row per layer
# in its .layers.csv naming that plan's primitive; the JSON prices each plan
# by the oracle's measurements, its reorders included. DIR is created.
expect_rc 0 compare --net "$tmp/tiny.txt" --verify 2 --check --check-time 0.1 --max-time 0.3 --profile-time 0.02 \
    --plans "$tmp/plans" --json
python3 - "$tmp/out" "$tmp/plans" <<'PY' || fail "compare --plans: $(cat "$tmp/out"; ls "$tmp/plans")"
import csv, json, os, sys
r = json.load(open(sys.argv[1]))
d = sys.argv[2]
for name in ("model", "onednn_auto", "single_best", "oracle", "verified", "checked"):
    plan = json.load(open(os.path.join(d, name + ".plan.json")))
    rows = list(csv.DictReader(open(os.path.join(d, name + ".layers.csv"))))
    assert len(rows) == len(plan["layers"]) == 6, (name, len(rows))
    for row, layer in zip(rows, plan["layers"]):
        assert row["primitive"] == layer["primitive"], (name, row, layer["primitive"])
        assert float(row["network_conv_ms"]) > 0 and float(row["alone_conv_ms"]) > 0, (name, row)
        assert float(row["network_reorder_ms"]) >= 0, (name, row)
        assert abs(float(row["predicted_cold_ms"]) - layer.get("cold_in_ms", 0.0)) < 1e-5, (name, row, layer)
for p in ("plan", "oracle", "verified", "checked"):
    assert r[p + "_measured_conv_ms"] > 0 and r[p + "_measured_reorder_ms"] >= 0, p
# The oracle is the plan the measurements make: priced by them, it is its own total.
oracle = json.load(open(os.path.join(d, "oracle.plan.json")))
# (the JSON prints 4 decimals)
assert abs(r["oracle_measured_conv_ms"] + r["oracle_measured_reorder_ms"] - oracle["total_ms"]) < 2e-4 + 1e-3 * oracle["total_ms"]
PY
expect_rc 0 run --net "$tmp/tiny.txt" --plan "$tmp/plans/verified.plan.json" --max-time 0.1
# Outputs that cannot be written are refused before the profiling, not after it.
expect_rc 2 compare --net "$tmp/tiny.txt" --max-time 0.1 --profile-time 0.02 --plans "$tmp/no/such/dir"
grep -q "cannot create the directory '$tmp/no/such/dir'" "$tmp/err" || fail "an unwritable --plans DIR not named: $(cat "$tmp/err")"
grep -q "profiling" "$tmp/err" && fail "compare profiled before refusing --plans: $(cat "$tmp/err")"
expect_rc 2 compare --net "$tmp/tiny.txt" --max-time 0.1 --profile-time 0.02 --plans "$tmp/plans/model.plan.json"
grep -q "is not a directory" "$tmp/err" || fail "--plans FILE: $(cat "$tmp/err")"
expect_rc 2 select --net "$tmp/tiny.txt" --verify 2 -o "$tmp/no/plan.json"
grep -q "no directory '$tmp/no'" "$tmp/err" || fail "select -o into a missing directory: $(cat "$tmp/err")"
grep -q "verify" "$tmp/err" && fail "select verified before refusing its -o: $(cat "$tmp/err")"
expect_rc 0 compare --net "$tmp/tiny.txt" --verify 2 --check --check-time 0.1 --max-time 0.3 --profile-time 0.02
grep -Eq "^checked plan .*= (model plan|verified plan|onednn_auto|plan without the [a-z]+ family)$" "$tmp/out" ||
    fail "compare --check names no row its plan copies: $(cat "$tmp/out")"
expect_rc 2 select --net "$tmp/tiny.txt" --check --check-time -1
grep -q -- "--check-time" "$tmp/err" || fail "bad --check-time not named: $(cat "$tmp/err")"

# Errors: each names what is wrong and exits non-zero.
expect_rc 1 select --net "$tmp/missing.txt"
grep -q "missing.txt" "$tmp/err" || fail "missing network file not named: $(cat "$tmp/err")"
printf 'g3mb1ic8ih8oc8oh8kh3ph1n"bad:groups"\n' >"$tmp/bad.txt"
expect_rc 2 select --net "$tmp/bad.txt" # an invalid descriptor is INVALID_ARGUMENT: exit 2
grep -q "bad.txt" "$tmp/err" || fail "impossible layer's file not named: $(cat "$tmp/err")"
expect_rc 1 select --net "$tmp/tiny.txt" --exclude onednn,gemm,winograd,direct_simd,im2col_gemm,gemm_1x1
grep -q "tiny:a" "$tmp/err" || fail "no primitive left: the layer is not named: $(cat "$tmp/err")"
expect_rc 2 select --net "$tmp/tiny.txt" --exclude no_such_primitive
expect_rc 1 select --net "$tmp/tiny.txt" --model "$tmp/missing.msgpack"
printf 'not a model' >"$tmp/corrupt.msgpack"
expect_rc 1 select --net "$tmp/tiny.txt" --model "$tmp/corrupt.msgpack"
grep -q "corrupt.msgpack" "$tmp/err" || fail "corrupt model not named: $(cat "$tmp/err")"
head -3 "$tmp/tiny.txt" >"$tmp/other.txt"
expect_rc 1 run --net "$tmp/other.txt" --plan "$tmp/plan.json" --max-time 0.1
expect_rc 0 select --net "$tmp/other.txt" --quiet -o "$tmp/plan_other.json"
expect_rc 1 run --net "$tmp/tiny.txt" --plan "$tmp/plan.json" --plan "$tmp/plan_other.json" --max-time 0.1
grep -q "plan_other.json was not made for network" "$tmp/err" || fail "second plan for another network: $(cat "$tmp/err")"
printf '{"format": "convsel-plan", ' >"$tmp/torn.json"
expect_rc 1 run --net "$tmp/tiny.txt" --plan "$tmp/torn.json" --max-time 0.1
grep -q "torn.json" "$tmp/err" || fail "torn plan not named: $(cat "$tmp/err")"

# A plan made on another CPU still runs, with a warning.
sed 's/"model_name": *"[^"]*"/"model_name": "Some Other CPU"/' "$tmp/plan.json" >"$tmp/foreign.json"
cmp -s "$tmp/plan.json" "$tmp/foreign.json" && fail "test setup: the plan has no model_name to change"
expect_rc 0 run --net "$tmp/tiny.txt" --plan "$tmp/foreign.json" --max-time 0.1
grep -qi "another CPU\|different CPU\|other CPU" "$tmp/err" || fail "foreign plan: no warning: $(cat "$tmp/err")"

# Several networks in one run: --net repeated or a directory (its *.txt in byte order), the
# model loaded once, each plan to -o DIR/NAME.plan.json, the same plan as alone; one network
# that fails is said, the others go on, and the exit status is its.
mkdir -p "$tmp/nets"
cp "$tmp/tiny.txt" "$tmp/nets/b_tiny.txt"
printf 'mb1ic8ih8oc8oh8kh3ph1n"small:a"\n' >"$tmp/nets/a_small.txt"
printf 'not a layer\n' >"$tmp/nets/notes.md"
expect_rc 0 select --net "$tmp/nets" --net "$tmp/tiny.txt" -o "$tmp/plans" --quiet
grep -q "^3 networks: 3 selected, 0 failed$" "$tmp/out" || fail "batch select, the count: $(cat "$tmp/out")"
grep -q "^tiny:a" "$tmp/out" && fail "batch select --quiet printed a table: $(cat "$tmp/out")"
[ "$(grep -c '\.plan\.json$' "$tmp/out")" = 3 ] || fail "batch select, the summary: $(cat "$tmp/out")"
[ "$(sed -n '/^network /,$p' "$tmp/out" | awk 'NR>1 && NF>1 {print $1}' | head -3 | tr '\n' ' ')" = "a_small b_tiny tiny " ] ||
    fail "batch select, not in the order given and byte order: $(cat "$tmp/out")"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/alone.json" --quiet
cmp -s "$tmp/plans/tiny.plan.json" "$tmp/alone.json" || fail "batch select: tiny's plan differs from select alone"
# b_tiny is tiny under another name, which the plan records.
cmp -s <(sed 's/"network": "b_tiny"/"network": "tiny"/' "$tmp/plans/b_tiny.plan.json") "$tmp/alone.json" ||
    fail "batch select: b_tiny's plan differs from tiny's alone"
[ -s "$tmp/plans/a_small.plan.json" ] || fail "batch select wrote no a_small.plan.json"
[ -e "$tmp/plans/notes.plan.json" ] && fail "batch select read notes.md"
expect_rc 0 select --net "$tmp/nets" --net "$tmp/tiny.txt"
grep -q "^== a_small ($tmp/nets/a_small.txt)$" "$tmp/out" || fail "batch select, no header: $(cat "$tmp/out")"
grep -q "small:a" "$tmp/out" || fail "batch select without --quiet, no table: $(cat "$tmp/out")"
printf 'mb1ic8ih8oc8oh99kh3ph1n"bad:a"\n' >"$tmp/nets/c_bad.txt"
expect_rc 2 select --net "$tmp/nets" -o "$tmp/plans2" --quiet
grep -q "c_bad.txt:1: .*inconsistent output size" "$tmp/err" || fail "batch select, the bad network unnamed: $(cat "$tmp/err")"
grep -q "^3 networks: 2 selected, 1 failed$" "$tmp/out" || fail "batch select with a bad network: $(cat "$tmp/out")"
[ -s "$tmp/plans2/a_small.plan.json" ] && [ -s "$tmp/plans2/b_tiny.plan.json" ] ||
    fail "batch select: a bad network cost the others' plans"
# Refused before any work: two files of one name, -o a file, a directory without networks.
expect_rc 2 select --net "$tmp/tiny.txt" --net "$tmp/nets/../tiny.txt" -o "$tmp/plans3"
grep -q "would both write $tmp/plans3/tiny.plan.json" "$tmp/err" || fail "batch select, one name twice: $(cat "$tmp/err")"
[ -e "$tmp/plans3" ] && fail "batch select refused, but created -o's directory"
expect_rc 2 select --net "$tmp/nets" -o "$tmp/alone.json"
grep -q "'$tmp/alone.json' is not a directory" "$tmp/err" || fail "batch select -o FILE: $(cat "$tmp/err")"
mkdir -p "$tmp/empty_dir"
expect_rc 2 select --net "$tmp/empty_dir"
grep -q "a directory without network files" "$tmp/err" || fail "batch select, empty directory: $(cat "$tmp/err")"
expect_rc 1 select --net "$tmp/nets" --net "$tmp/missing_dir"
grep -q "missing_dir: No such file or directory" "$tmp/err" || fail "batch select, a missing path: $(cat "$tmp/err")"
# --resume: an earlier run's plans are kept where they are this network's, with these threads,
# model and CPU; a corrupt or stale one is said and selected again, to the same plan.
rm -f "$tmp/nets/c_bad.txt"
expect_rc 0 select --net "$tmp/nets" --net "$tmp/tiny.txt" -o "$tmp/plans4" --quiet
cp -r "$tmp/plans4" "$tmp/plans4.first"
echo '{"format": "convsel-plan"' >"$tmp/plans4/b_tiny.plan.json"
expect_rc 0 select --net "$tmp/nets" --net "$tmp/tiny.txt" -o "$tmp/plans4" --quiet --resume
grep -q "^3 networks: 1 selected, 2 kept from an earlier run, 0 failed$" "$tmp/out" ||
    fail "--resume, the count: $(cat "$tmp/out")"
grep -q "^a_small .* kept $tmp/plans4/a_small.plan.json$" "$tmp/out" || fail "--resume, a_small not kept: $(cat "$tmp/out")"
grep -q "note: $tmp/plans4/b_tiny.plan.json is not kept (.*): selecting again" "$tmp/err" ||
    fail "--resume, the corrupt plan not said: $(cat "$tmp/err")"
for name in a_small b_tiny tiny; do
    cmp -s "$tmp/plans4/$name.plan.json" "$tmp/plans4.first/$name.plan.json" || fail "--resume: $name's plan changed"
done
expect_rc 0 select --net "$tmp/nets" -o "$tmp/plans4" --threads 2 --resume --quiet
grep -q "^2 networks: 2 selected, 0 kept from an earlier run, 0 failed$" "$tmp/out" ||
    fail "--resume at other threads kept a plan: $(cat "$tmp/out")"
grep -q "a_small.plan.json is not kept (other threads): selecting again" "$tmp/err" ||
    fail "--resume at other threads, not said: $(cat "$tmp/err")"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/alone.json" --resume
grep -q "^kept $tmp/alone.json: made by an earlier run for this network, 1 thread, model " "$tmp/out" ||
    fail "--resume with one network: $(cat "$tmp/out")"
grep -q "^tiny:a" "$tmp/out" && fail "--resume with one network selected again: $(cat "$tmp/out")"
expect_rc 0 select --net "$tmp/tiny.txt" --mb 2 -o "$tmp/alone.json" --resume --quiet
grep -q "is not kept (another network or batch)" "$tmp/err" || fail "--resume at another batch: $(cat "$tmp/err")"
sed 's/"model_id": *"[^"]*"/"model_id": "0123456789abcdef"/' "$tmp/plans4.first/tiny.plan.json" >"$tmp/alone.json"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/alone.json" --resume --quiet
grep -q "is not kept (another model)" "$tmp/err" || fail "--resume, a plan of another model: $(cat "$tmp/err")"
sed 's/"cores": *[0-9]*/"cores": 999/' "$tmp/plans4.first/tiny.plan.json" >"$tmp/alone.json"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/alone.json" --resume --quiet
grep -q "is not kept (another CPU or OpenBLAS setup)" "$tmp/err" || fail "--resume, a plan of another CPU: $(cat "$tmp/err")"
cmp -s "$tmp/alone.json" "$tmp/plans4.first/tiny.plan.json" || fail "--resume, selected again: not the same plan"
# The plan records the options that change its choices; --resume keeps it only under the same ones.
grep -q '"made_with": {"max_error": 0, "excluded": \[\], "verify": 0, "verify_alone": false, "uncertainty": 0, "checked": false, "check_time_s": 0},' \
    "$tmp/alone.json" || fail "a plain plan's made_with: $(grep made_with "$tmp/alone.json")"
made_with=$(grep '"made_with"' "$tmp/plan_ex.json")
for name in direct_simd winograd_2x2_3x3 winograd_4x4_3x3; do # the families' primitives, by name
    [[ $made_with == *'"excluded": ['*"\"$name\""*'], "verify"'* ]] || fail "--exclude's plan lacks $name: $made_with"
done
grep -q '"made_with": {"max_error": 3.0000000000000001e-06, ' "$tmp/plan_me.json" ||
    fail "--max-error's plan, made_with: $(grep made_with "$tmp/plan_me.json")"
cp "$tmp/plan_ex.json" "$tmp/ex.json"
expect_rc 0 select --net "$tmp/tiny.txt" --exclude direct_simd,winograd -o "$tmp/ex.json" --resume
grep -q "^kept $tmp/ex.json: .* these options$" "$tmp/out" || fail "--resume, the same --exclude in another order: $(cat "$tmp/out") $(cat "$tmp/err")"
expect_rc 0 select --net "$tmp/tiny.txt" --exclude winograd -o "$tmp/ex.json" --resume --quiet
grep -q "ex.json is not kept (made excluding '.*direct_simd.*', not '[a-z0-9_,]*'): selecting again" "$tmp/err" ||
    fail "--resume with another --exclude: $(cat "$tmp/err")"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/alone.json" --max-error 3e-6 --resume --quiet
grep -q "is not kept (made with --max-error 0, not 3e-06)" "$tmp/err" || fail "--resume with --max-error: $(cat "$tmp/err")"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/ver.json" --verify 2 --uncertainty 0.5 --quiet
grep -q '"verify": 2, "verify_alone": false, "uncertainty": 0.5, "checked": false' "$tmp/ver.json" ||
    fail "--verify 2 --uncertainty 0.5, made_with: $(grep made_with "$tmp/ver.json")"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/ver.json" --verify 2 --uncertainty 0.5 --resume
grep -q "^kept $tmp/ver.json: .* these options$" "$tmp/out" || fail "--resume, the same --verify: $(cat "$tmp/out") $(cat "$tmp/err")"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/ver.json" --verify 2 --uncertainty 0.25 --resume --quiet
grep -q "is not kept (made with --uncertainty 0.5, not 0.25)" "$tmp/err" || fail "--resume, another --uncertainty: $(cat "$tmp/err")"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/ver.json" --verify 2 --uncertainty 0.25 --alone --resume --quiet
grep -q "is not kept (made without --alone)" "$tmp/err" || fail "--resume, --alone: $(cat "$tmp/err")"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/ver.json" --resume --quiet
grep -q "is not kept (made with --verify 2, not 0)" "$tmp/err" || fail "--resume without --verify: $(cat "$tmp/err")"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/ver.json" --check --check-time 0.1 --quiet
grep -q '"checked": true, "check_time_s": 0.10000000000000001}' "$tmp/ver.json" ||
    fail "--check --check-time 0.1, made_with: $(grep made_with "$tmp/ver.json")"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/ver.json" --check --check-time 0.2 --resume --quiet
grep -q "is not kept (made with --check-time 0.1, not 0.2)" "$tmp/err" || fail "--resume, another --check-time: $(cat "$tmp/err")"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/ver.json" --resume --quiet
grep -q "is not kept (made with --check)" "$tmp/err" || fail "--resume without --check: $(cat "$tmp/err")"
# A plan written before plans recorded their options is selected again.
grep -v '"made_with"' "$tmp/plans4.first/tiny.plan.json" >"$tmp/alone.json"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/alone.json" --resume --quiet
grep -q "is not kept (made before plans recorded their options)" "$tmp/err" || fail "--resume, an older plan: $(cat "$tmp/err")"
cmp -s "$tmp/alone.json" "$tmp/plans4.first/tiny.plan.json" || fail "--resume, an older plan selected again: not the same plan"
# A made_with naming no primitive is a corrupt plan, said and selected again.
sed 's/"excluded": \[\]/"excluded": ["no_such_primitive"]/' "$tmp/plans4.first/tiny.plan.json" >"$tmp/alone.json"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/alone.json" --resume --quiet
grep -q "alone.json:[0-9]*: unknown primitive 'no_such_primitive' in made_with" "$tmp/err" ||
    fail "--resume, a made_with of no primitive: $(cat "$tmp/err")"
sed 's/"made_with": {[^}]*}/"made_with": {}/' "$tmp/plans4.first/tiny.plan.json" >"$tmp/alone.json"
expect_rc 0 select --net "$tmp/tiny.txt" -o "$tmp/alone.json" --resume --quiet
grep -q "alone.json:[0-9]*: made_with without keys" "$tmp/err" || fail "--resume, an empty made_with: $(cat "$tmp/err")"
expect_rc 2 select --net "$tmp/nets" --resume
grep -q -- "--resume keeps the plans at -o" "$tmp/err" || fail "--resume without -o: $(cat "$tmp/err")"

# --oracle: plans from exhaustive profiling, no model. A copy of a network under another name
# is not measured again and, priced by the same measurements, gets the same choices.
mkdir -p "$tmp/onets"
cp "$tmp/tiny.txt" "$tmp/onets/first.txt"
cp "$tmp/tiny.txt" "$tmp/onets/second.txt"
expect_rc 0 select --net "$tmp/onets" --oracle --profile-time 0.02 -o "$tmp/oracle"
grep -q "profiling every primitive on every layer (the oracle)" "$tmp/err" || fail "select --oracle, no note: $(cat "$tmp/err")"
grep -q "^selected in [0-9.]* ms, 0.00 s of it profiling" "$tmp/out" ||
    fail "select --oracle measured the copy again: $(cat "$tmp/out")"
grep -q "^2 networks: 2 selected, 0 failed; [0-9.]* s of profiling for the oracle$" "$tmp/out" ||
    fail "select --oracle, the summary: $(cat "$tmp/out")"
for name in first second; do
    grep -q '"model_id": "measured"' "$tmp/oracle/$name.plan.json" || fail "the oracle's plan $name is not 'measured'"
done
python3 - "$tmp/oracle/first.plan.json" "$tmp/oracle/second.plan.json" "$tmp/plans4.first/tiny.plan.json" <<'PY' ||
import json, sys
a, b, model = (json.load(open(f)) for f in sys.argv[1:])
pick = lambda p: [(l["primitive"], l["conv_ms"]) for l in p["layers"]]
assert len(a["layers"]) == 6, len(a["layers"])
assert pick(a) == pick(b), ("the copy's oracle plan differs", pick(a), pick(b))
assert a["boundary_layout"] == b["boundary_layout"]
# Measured, not predicted: not the model's costs layer by layer.
assert [l["conv_ms"] for l in a["layers"]] != [l["conv_ms"] for l in model["layers"]]
assert all(l["conv_ms"] > 0 for l in a["layers"]), pick(a)
PY
    fail "select --oracle's plans"
expect_rc 0 select --net "$tmp/onets" --oracle --profile-time 0.02 -o "$tmp/oracle" --resume --quiet
grep -q "^2 networks: 0 selected, 2 kept from an earlier run, 0 failed; 0.0 s of profiling for the oracle$" "$tmp/out" ||
    fail "select --oracle --resume: $(cat "$tmp/out") $(cat "$tmp/err")"
expect_rc 0 select --net "$tmp/onets" -o "$tmp/oracle" --resume --quiet
grep -q "first.plan.json is not kept (another model)" "$tmp/err" || fail "--resume kept the oracle's plan for the model's: $(cat "$tmp/err")"
expect_rc 0 select --net "$tmp/onets/first.txt" --oracle --profile-time 0.02 --exclude winograd,direct_simd \
    -o "$tmp/oracle_ex.json" --quiet
grep -Eq '"primitive": *"(winograd|direct_simd)' "$tmp/oracle_ex.json" && fail "select --oracle ignored --exclude"
grep -q '"excluded": \["direct_simd",' "$tmp/oracle_ex.json" || fail "select --oracle --exclude, made_with: $(grep made_with "$tmp/oracle_ex.json")"
expect_rc 0 run --net "$tmp/onets/first.txt" --plan "$tmp/oracle/first.plan.json" --plan "$tmp/oracle_ex.json" --max-time 0.1
grep -q "^plan 2 $tmp/oracle_ex.json: 1 thread" "$tmp/out" || fail "run, the oracle's two plans: $(cat "$tmp/out")"
for clash in "--model models/default.msgpack" "--verify 2" "--alone" "--uncertainty 0.5" "--check" "--check-time 1"; do
    # shellcheck disable=SC2086 # the option and its value
    expect_rc 2 select --net "$tmp/tiny.txt" --oracle $clash
    grep -q -- "--oracle chooses by measurement alone, without a model: not with ${clash%% *}$" "$tmp/err" ||
        fail "select --oracle $clash: $(cat "$tmp/err")"
done
expect_rc 2 select --net "$tmp/tiny.txt" --profile-time 1
grep -q -- "--profile-time is the oracle's: give --oracle" "$tmp/err" || fail "--profile-time without --oracle: $(cat "$tmp/err")"

finish cli_selector
