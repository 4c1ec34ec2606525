#!/usr/bin/env bash
# convsel calibrate: usage errors, and the whole path on tiny layers (profile a
# source, train, calibrate by profiling and from a dataset, then use the
# result). Timing-free: it checks what was written, not how fast. $1: the
# convsel binary.
set -u
convsel=${1:?usage: cli_calibrate.sh path/to/convsel}
source "$(dirname "${BASH_SOURCE[0]}")/shell_lib.sh"
unset CONVSEL_ISA OPENBLAS_CORETYPE CONVSEL_MODEL

expect_rc 0 calibrate --help
grep -q "^usage: convsel" "$tmp/out" || fail "calibrate --help prints no usage"
expect_rc 2 calibrate --samples 5
expect_rc 2 calibrate -o "$tmp/x.msgpack"
expect_rc 2 calibrate --samples 0 -o "$tmp/x.msgpack"
expect_rc 2 calibrate --samples 5 --method cubic -o "$tmp/x.msgpack"
expect_rc 2 calibrate --samples 5 --threads 0 -o "$tmp/x.msgpack"
expect_rc 2 calibrate --samples 5 --bogus -o "$tmp/x.msgpack"
expect_rc 1 calibrate --model "$tmp/missing.msgpack" --samples 5 -o "$tmp/x.msgpack"
# An output it cannot write is refused before anything is measured, not after.
expect_rc 2 calibrate --samples 5 -o "$tmp/no_dir/x.msgpack"
grep -q "no directory '$tmp/no_dir'" "$tmp/err" || fail "calibrate -o into a missing directory: $(cat "$tmp/err")"
grep -q '\[1/' "$tmp/err" && fail "calibrate measured before refusing its -o: $(cat "$tmp/err")"
expect_rc 2 calibrate --samples 5 -o "$tmp/x.msgpack" --data "$tmp/no_dir/d.msgpack"
grep -q -- "--data: no directory" "$tmp/err" || fail "calibrate --data into a missing directory: $(cat "$tmp/err")"
expect_rc 2 calibrate --samples 5 -o "$tmp"
grep -q "is a directory" "$tmp/err" || fail "calibrate -o DIR: $(cat "$tmp/err")"

# Tiny layers, so that profiling them takes a moment.
cat >"$tmp/tiny.txt" <<'EOF'
mb1ic8ih8oc8oh8kh3ph1n"tiny:a"
mb1ic16ih8oc8oh8kh1n"tiny:b"
mb1ic8ih12oc16oh6kh3sh2ph1n"tiny:c"
mb1ic16ih6oc16oh6kh3ph1n"tiny:d"
g8mb1ic8ih8oc8oh8kh3ph1n"tiny:e"
EOF
# The source under the SSE4.1 cap, so that the AVX2 samples below ran on a machine
# (ISA cap) its data lacks, on any x86 machine.
"$convsel" --isa sse41 profile --net "$tmp/tiny.txt" --threads 1 --max-time-s 0.02 --no-reorders --quiet \
    -o "$tmp/source.msgpack" >/dev/null 2>"$tmp/err" || fail "profile exited $?: $(cat "$tmp/err")"
"$convsel" train "$tmp/source.msgpack" -o "$tmp/source_model.msgpack" --params trees=20,valid_fraction=0 --quiet \
    >/dev/null 2>"$tmp/err" || fail "train exited $?: $(cat "$tmp/err")"

# Profiling K configurations here, under an AVX2 cap.
"$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 3 --threads 1 --pool "$tmp/tiny.txt" \
    --sampled 0 --max-time-s 0.02 --data "$tmp/samples.msgpack" --json -o "$tmp/cal.msgpack" \
    >"$tmp/out" 2>"$tmp/err" || fail "calibrate exited $?: $(cat "$tmp/err")"
for key in '"samples": 3, "samples_asked": 3, "samples_cut": false,' '"chosen_by_auto": true' '"cv_regret_log": ' '"seconds": ' '"source_model": "' \
    '"model": "' '"isa": "avx2"' '"reorder_samples": ' '"reorder_seconds": ' '"reorder_scale": {' \
    '"reorder_fixed_ms": {' '"reorder_loo_error": {' \
    '"cold_samples": ' '"cold_seconds": ' '"cold_ms_per_mb": {' \
    '"network_samples": ' '"network_seconds": ' '"network_ms_per_mb": {' '"busy_others_cpus": {"profile": ' \
    '"busy_steal_cpus": {"profile": '; do
    grep -q "$key" "$tmp/out" || fail "calibrate --json lacks '$key': $(cat "$tmp/out")"
done
# Without the model's datasets the default method is linear-or-both, which records the method it chose.
grep -Eq '"method": "(linear|both)", "chosen_by_auto": true, "method_by_default": false, "method_asked": "linear-or-both"' \
    "$tmp/out" || fail "the default without datasets: $(cat "$tmp/out")"
[ -s "$tmp/cal.msgpack" ] || fail "no calibrated model written"
# convsel model reads the calibration back as calibrate reported it.
cp "$tmp/out" "$tmp/cal.json"
"$convsel" model --model "$tmp/cal.msgpack" --json >"$tmp/model.json" 2>"$tmp/err" \
    || fail "model --json on the calibration exited $?: $(cat "$tmp/err")"
"$convsel" model --model "$tmp/cal.msgpack" >"$tmp/model.txt" 2>"$tmp/err" \
    || fail "model on the calibration exited $?: $(cat "$tmp/err")"
grep -q "^calibrations: 1$" "$tmp/model.txt" || fail "model: no calibration listed: $(cat "$tmp/model.txt")"
python3 - "$tmp/cal.json" "$tmp/model.json" <<'PY' || failed=1
import json, sys
cal = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
doc = json.load(open(sys.argv[2]))
errors = []
cs = doc.get("calibrations", [])
if len(cs) != 1:
    sys.exit(print("FAIL: model --json: calibrations %r" % cs, file=sys.stderr) or 1)
c = cs[0]
for key in ("samples", "source_model", "method", "cold_samples", "network_samples", "reorder_samples"):
    if c.get(key) != cal.get(key):
        errors.append("%s %r, calibrate said %r" % (key, c.get(key), cal.get(key)))
if c["cpu"]["isa_cap"] != "avx2" or c.get("threads") != [1]:
    errors.append("cpu cap %r, threads %r" % (c["cpu"]["isa_cap"], c.get("threads")))
if sorted(c.get("network_ms_per_mb", {})) != sorted(doc["primitives"]):
    errors.append("weights prices for %r" % sorted(c.get("network_ms_per_mb", {})))
prices = [v.get("1", -1) for v in c["network_ms_per_mb"].values()]
if cal.get("network_samples") and abs(max(prices) - cal["network_ms_per_mb"]["1"][1]) > 1e-4:
    errors.append("largest weights price %r, calibrate said %r" % (max(prices), cal["network_ms_per_mb"]["1"]))
if cal.get("cold_samples") and abs(c["cold_ms_per_mb"]["1"] - cal["cold_ms_per_mb"]["1"]) > 1e-4:
    errors.append("cold price %r, calibrate said %r" % (c["cold_ms_per_mb"], cal["cold_ms_per_mb"]))
for e in errors:
    print("FAIL: model --json on a calibration: " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
"$convsel" dataset info "$tmp/samples.msgpack" >"$tmp/info" 2>&1 || fail "--data wrote no readable dataset"
grep -q "3 configurations" "$tmp/info" || fail "--data: expected 3 configurations: $(cat "$tmp/info")"

# Reorders timed inside a pool network whose layers connect: the model's reorder prices are
# scaled for this CPU (tiny.txt connects no three layers in a row, so it gave none);
# --reorder-time-s 0 times none; a negative budget is a usage error.
cat >"$tmp/chain.txt" <<'EOF'
mb1ic8ih8oc8oh8kh3ph1n"chain:a*3"
mb1ic8ih8oc8oh8kh1n"chain:b*3"
EOF
expect_rc 2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --reorder-time-s -1 -o "$tmp/x.msgpack"
"$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --threads 1 --pool "$tmp/chain.txt" \
    --sampled 0 --max-time-s 0.02 --reorder-time-s 0.1 -o "$tmp/cal_chain.msgpack" \
    >"$tmp/out" 2>"$tmp/err" || fail "calibrate with a chain exited $?: $(cat "$tmp/err")"
grep -Eq "^  [1-9][0-9]* reorders timed inside networks: the model's reorder prices (\(line \+ [0-9.]+ ms\) )?x[0-9.]+ at 1 thread" "$tmp/out" ||
    fail "calibrate timed no reorders in a chain: $(cat "$tmp/out") $(cat "$tmp/err")"
grep -q "reorders timed inside 1 network in" "$tmp/err" || fail "calibrate's reorder progress: $(cat "$tmp/err")"
"$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --threads 1 --pool "$tmp/chain.txt" \
    --sampled 0 --max-time-s 0.02 --reorder-time-s 0 --json -o "$tmp/cal_chain0.msgpack" \
    >"$tmp/out" 2>"$tmp/err" || fail "calibrate --reorder-time-s 0 exited $?: $(cat "$tmp/err")"
grep -q '"reorder_samples": 0, "reorder_seconds": 0.000, "reorder_scale": {}' "$tmp/out" ||
    fail "calibrate --reorder-time-s 0 timed reorders: $(cat "$tmp/out")"
grep -q '"reorder_pairs_own": {}, "reorder_pairs_loo_error": {}' "$tmp/out" ||
    fail "calibrate --reorder-time-s 0 fitted reorder lines: $(cat "$tmp/out")"

# --total-time-s: a later pool network the probe's time so far projects past the command's bound is
# left out, with a note naming it; 0 is no bound; a negative bound is a usage error.
cp "$tmp/chain.txt" "$tmp/chain2.txt"
expect_rc 2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --total-time-s -1 -o "$tmp/x.msgpack"
grep -q -- "--total-time-s" "$tmp/err" || fail "calibrate --total-time-s -1: $(cat "$tmp/err")"
for bound in 0.001 0; do
    "$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --threads 1 \
        --pool "$tmp/chain.txt" --pool "$tmp/chain2.txt" --sampled 0 --max-time-s 0.02 --reorder-time-s 30 \
        --cold-time-s 0 --network-time-s 0 --total-time-s $bound -o "$tmp/cal_bound.msgpack" \
        >"$tmp/out" 2>"$tmp/err" || fail "calibrate --total-time-s $bound exited $?: $(cat "$tmp/err")"
    "$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --threads 1 \
        --pool "$tmp/chain.txt" --pool "$tmp/chain2.txt" --sampled 0 --max-time-s 0.02 --reorder-time-s 30 \
        --cold-time-s 0 --network-time-s 0 --total-time-s $bound --json -o "$tmp/cal_bound.msgpack" \
        >"$tmp/json" 2>&1 || fail "calibrate --total-time-s $bound --json exited $?: $(cat "$tmp/json")"
    grep -q "\"networks_left_out\": $([ $bound = 0 ] && echo 0 || echo 1), \"fit_time_limit_s\"" "$tmp/json" ||
        fail "--total-time-s $bound: networks_left_out: $(cat "$tmp/json")"
    if [ $bound = 0 ]; then
        grep -q "reorders timed inside 2 networks in" "$tmp/err" || fail "--total-time-s 0 bounded: $(cat "$tmp/err")"
        ! grep -q "left out" "$tmp/err" || fail "--total-time-s 0 left a network out: $(cat "$tmp/err")"
    else
        grep -q "reorders timed inside 1 network in" "$tmp/err" || fail "--total-time-s $bound: $(cat "$tmp/err")"
        grep -q "note: chain2 left out of the reorders probe: projected to end at .* (--total-time-s)" "$tmp/err" ||
            fail "--total-time-s $bound: no note: $(cat "$tmp/err")"
    fi
done

# --total-time-s bounds profiling too: 30 samples (each times several primitives, 0.02 s of warm-up apiece)
# cannot fit in 4/5 of a second, so it stops past the first 5, keeps those profiled, and says so.
"$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 30 --threads 1 --pool "$tmp/tiny.txt" \
    --sampled 40 --max-time-s 0.02 --reorder-time-s 0 --cold-time-s 0 --network-time-s 0 --total-time-s 1 \
    --data "$tmp/cut_samples.msgpack" -o "$tmp/cal_cut.msgpack" >"$tmp/out" 2>"$tmp/err" ||
    fail "calibrate with profiling cut exited $?: $(cat "$tmp/err")"
grep -Eq "note: profiled ([5-9]|[12][0-9]) of the 30 samples: the next would have run past profiling's 0.8 s share of --total-time-s" \
    "$tmp/err" || fail "profiling under --total-time-s 1: $(cat "$tmp/err")"
n_cut=$(sed -n 's/.*note: profiled \([0-9]*\) of the 30 samples.*/\1/p' "$tmp/err")
grep -q "^  $n_cut configurations," "$tmp/out" || fail "the calibration's samples are not the $n_cut profiled: $(cat "$tmp/out")"
"$convsel" dataset info "$tmp/cut_samples.msgpack" >"$tmp/info" 2>&1 || fail "--data after a cut: $(cat "$tmp/info")"
grep -q "$n_cut configurations" "$tmp/info" || fail "--data after a cut: expected $n_cut configurations: $(cat "$tmp/info")"
"$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 30 --threads 1 --pool "$tmp/tiny.txt" \
    --sampled 40 --max-time-s 0.02 --reorder-time-s 0 --cold-time-s 0 --network-time-s 0 --total-time-s 1 --json \
    -o "$tmp/cal_cut.msgpack" >"$tmp/out" 2>"$tmp/err" || fail "calibrate --json with profiling cut exited $?: $(cat "$tmp/err")"
grep -Eq '"samples": ([5-9]|[12][0-9]), "samples_asked": 30, "samples_cut": true,' "$tmp/out" ||
    fail "--json with profiling cut: $(cat "$tmp/out")"

# Cold reads: the reorders that bring the chain's first layer its input, timed inside it under every
# boundary layout; --cold-time-s 0 times none; a negative budget is a usage error.
expect_rc 2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --cold-time-s -1 -o "$tmp/x.msgpack"
grep -q -- "--cold-time-s" "$tmp/err" || fail "calibrate --cold-time-s -1: $(cat "$tmp/err")"
grep -Eq "^  [1-9][0-9]* cold reads timed inside networks: reading a layer's input from memory costs" \
    <("$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --threads 1 \
        --pool "$tmp/chain.txt" --sampled 0 --max-time-s 0.02 --reorder-time-s 0 --cold-time-s 0.1 \
        -o "$tmp/cal_cold.msgpack" 2>"$tmp/err") || fail "calibrate timed no cold reads in a chain: $(cat "$tmp/err")"
grep -q "cold reads timed inside 1 network in" "$tmp/err" || fail "calibrate's cold-read progress: $(cat "$tmp/err")"
"$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --threads 1 --pool "$tmp/chain.txt" \
    --sampled 0 --max-time-s 0.02 --reorder-time-s 0 --cold-time-s 0 --json -o "$tmp/cal_cold0.msgpack" \
    >"$tmp/out" 2>"$tmp/err" || fail "calibrate --cold-time-s 0 exited $?: $(cat "$tmp/err")"
grep -q '"cold_samples": 0, "cold_seconds": 0.000, "cold_ms_per_mb": {}' "$tmp/out" ||
    fail "calibrate --cold-time-s 0 timed cold reads: $(cat "$tmp/out")"

# Convolutions inside networks against alone: every primitive on the chain's layers; the prices per MB
# of weights are reported per thread slot (a tiny chain's may all be noise); --network-time-s 0 times none; a negative budget is a usage error.
expect_rc 2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --network-time-s -1 -o "$tmp/x.msgpack"
grep -q -- "--network-time-s" "$tmp/err" || fail "calibrate --network-time-s -1: $(cat "$tmp/err")"
"$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --threads 1 --pool "$tmp/chain.txt" \
    --sampled 0 --max-time-s 0.02 --reorder-time-s 0 --cold-time-s 0 --network-time-s 0.1 \
    -o "$tmp/cal_net.msgpack" >"$tmp/out" 2>"$tmp/err" || fail "calibrate --network-time-s exited $?: $(cat "$tmp/err")"
grep -Eq "^  [1-9][0-9]* convolutions timed inside networks against alone: their weights cost( [0-9.]+-[0-9.]+ ms/MB by primitive at 1 thread| nothing measurable) in selection" \
    "$tmp/out" || fail "calibrate timed no convolutions in a chain: $(cat "$tmp/out") $(cat "$tmp/err")"
grep -q "convolutions timed inside 1 network in" "$tmp/err" || fail "calibrate's convolution progress: $(cat "$tmp/err")"
"$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --threads 1 --pool "$tmp/chain.txt" \
    --sampled 0 --max-time-s 0.02 --reorder-time-s 0 --cold-time-s 0 --network-time-s 0 --json \
    -o "$tmp/cal_net0.msgpack" >"$tmp/out" 2>"$tmp/err" || fail "calibrate --network-time-s 0 exited $?: $(cat "$tmp/err")"
grep -q '"network_samples": 0, "network_seconds": 0.000, "network_ms_per_mb": {}' "$tmp/out" ||
    fail "calibrate --network-time-s 0 timed convolutions: $(cat "$tmp/out")"

# From that dataset, without profiling; 2 of its 3 configurations.
"$convsel" calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --samples 2 \
    --method linear --json -o "$tmp/cal2.msgpack" >"$tmp/out" 2>"$tmp/err" || fail "--from-data exited $?: $(cat "$tmp/err")"
grep -q '"samples": 2' "$tmp/out" || fail "--from-data --samples 2: $(cat "$tmp/out")"
grep -q '"method": "linear", "chosen_by_auto": false' "$tmp/out" || fail "--method linear: $(cat "$tmp/out")"
# auto with two configurations: nothing to cross-validate, the pooled line.
"$convsel" calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --samples 2 \
    --method auto --json -o "$tmp/cal3.msgpack" >"$tmp/out" 2>"$tmp/err" || fail "--method auto exited $?: $(cat "$tmp/err")"
grep -q '"method": "pooled", "chosen_by_auto": true' "$tmp/out" || fail "auto on 2 configurations: $(cat "$tmp/out")"
grep -q '"method_asked": "auto"' "$tmp/out" || fail "auto: method_asked: $(cat "$tmp/out")"
# linear-or-both with two configurations: the lines, chosen without cross-validation.
"$convsel" calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --samples 2 \
    --method linear-or-both --json -o "$tmp/cal3.msgpack" >"$tmp/out" 2>"$tmp/err" ||
    fail "--method linear-or-both exited $?: $(cat "$tmp/err")"
grep -q '"method": "linear", "chosen_by_auto": true, "method_by_default": false, "method_asked": "linear-or-both"' \
    "$tmp/out" || fail "linear-or-both on 2 configurations: $(cat "$tmp/out")"
grep -q '"profile_seconds": 0.000' "$tmp/out" || fail "--from-data profiled: $(cat "$tmp/out")"
expect_rc 2 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --samples 9 -o "$tmp/x.msgpack"

# retrain: a new model on the source's dataset plus the samples.
"$convsel" calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --method retrain \
    --source-data "$tmp/source.msgpack" --retrain-copies 3 --json -o "$tmp/cal4.msgpack" >"$tmp/out" 2>"$tmp/err" ||
    fail "--method retrain exited $?: $(cat "$tmp/err")"
grep -q '"samples": 3, "samples_asked": 0, "samples_cut": false, "records": [0-9]*, "method": "retrain", "chosen_by_auto": false' "$tmp/out" ||
    fail "--method retrain: $(cat "$tmp/out")"
# The time retraining took is reported, within the command's.
fit=$(grep -o '"fit_seconds": [0-9.]*' "$tmp/out" | cut -d' ' -f2)
total=$(grep -o '"seconds": [0-9.]*' "$tmp/out" | cut -d' ' -f2)
awk -v f="$fit" -v t="$total" 'BEGIN { exit !(f > 0 && f <= t) }' ||
    fail "retrain: fit_seconds '$fit' not in (0, seconds '$total']: $(cat "$tmp/out")"
# Its trees got what --total-time-s (50 s) left, nothing was measured, and
# they finished within it.
grep -Eq '"fit_time_limit_s": (4[0-9]\.[0-9]*|50\.000), "fit_cut": 0, "fit_fewest_trees": 0, "fit_fallback": false,' "$tmp/out" ||
    fail "retrain's share of --total-time-s: $(cat "$tmp/out")"
# A bound already spent cuts every bag after its first tree of 20, says so,
# and fits linear-or-both instead.
"$convsel" calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --method retrain \
    --source-data "$tmp/source.msgpack" --retrain-copies 3 --total-time-s 0.000001 -o "$tmp/cut.msgpack" \
    >"$tmp/out" 2>"$tmp/err" || fail "retrain under a spent bound exited $?: $(cat "$tmp/err")"
grep -q "note: retraining stopped adding trees at its 0.0 s share of --total-time-s in 3 of 3 ensembles, one at 1 of 20 trees; under a quarter of them, it ranks worse than the lines: calibrating with linear-or-both instead" "$tmp/err" ||
    fail "retrain under a spent bound, the note: $(cat "$tmp/err")"
# (The lines or both, as cross-validation on the measured samples decides.)
grep -Eq "method (linear|both) \(chosen by linear-or-both: retraining was cut short by --total-time-s\)" "$tmp/out" ||
    fail "retrain under a spent bound, the summary: $(cat "$tmp/out")"
"$convsel" calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --method retrain \
    --source-data "$tmp/source.msgpack" --retrain-copies 3 --total-time-s 0.000001 --json -o "$tmp/cut2.msgpack" \
    >"$tmp/out" 2>"$tmp/err" || fail "retrain under a spent bound, --json, exited $?: $(cat "$tmp/err")"
grep -Eq '"method": "(linear|both)", "chosen_by_auto": true, "method_by_default": false, "method_asked": "retrain"' "$tmp/out" &&
    grep -q '"fit_cut": 3, "fit_fewest_trees": 1, "fit_fallback": true,' "$tmp/out" ||
    fail "retrain under a spent bound, --json: $(cat "$tmp/out")"
"$convsel" calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --method retrain \
    --source-data "$tmp/source.msgpack" --retrain-copies 3 --total-time-s 0 --json -o "$tmp/x.msgpack" \
    >"$tmp/out" 2>"$tmp/err" || fail "retrain without a bound exited $?: $(cat "$tmp/err")"
grep -q '"fit_time_limit_s": 0.000, "fit_cut": 0, "fit_fewest_trees": 0, "fit_fallback": false,' "$tmp/out" || fail "retrain without a bound: $(cat "$tmp/out")"
"$convsel" --isa avx2 predict --model "$tmp/cal4.msgpack" 'mb1ic8ih8oc8oh8kh3ph1' >/dev/null 2>"$tmp/err" ||
    fail "predict with the retrained model exited $?: $(cat "$tmp/err")"
# retrain needs the source's datasets, and they are for retrain only; a missing one is named.
expect_rc 2 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --method retrain \
    -o "$tmp/x.msgpack"
grep -q "needs the datasets the model was trained on" "$tmp/err" || fail "retrain without --source-data: $(cat "$tmp/err")"
expect_rc 2 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --method linear \
    --source-data "$tmp/source.msgpack" -o "$tmp/x.msgpack"
grep -q "for --method retrain only" "$tmp/err" || fail "--source-data with linear: $(cat "$tmp/err")"
# Given the source's data and no method, calibrate retrains when the samples ran under a cap
# (or a core or thread count) the data lacks, as here ...
expect_rc 0 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" \
    --source-data "$tmp/source.msgpack" --json -o "$tmp/x.msgpack"
grep -q '"method": "retrain", "chosen_by_auto": false, "method_by_default": true' "$tmp/out" ||
    fail "--source-data without --method, new cap: $(cat "$tmp/out")"
# ... and fits the per-primitive lines (with residual trees where cross-validation says they
# pay: linear-or-both) when the data has them all: its own records as samples.
expect_rc 0 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/source.msgpack" --samples 3 \
    --source-data "$tmp/source.msgpack" -o "$tmp/x.msgpack"
grep -q "method linear-or-both: this CPU's ISA cap, cores and thread counts all occur in the model's datasets" \
    "$tmp/err" || fail "--source-data without --method, known machine: no reason on stderr: $(cat "$tmp/err")"
grep -Eq "method (linear|both) \(chosen by linear-or-both, the default for this CPU\)" "$tmp/out" ||
    fail "--source-data without --method, known machine: $(cat "$tmp/out")"
expect_rc 0 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/source.msgpack" --samples 3 \
    --source-data "$tmp/source.msgpack" --json -o "$tmp/x.msgpack"
grep -Eq '"method": "(linear|both)", "chosen_by_auto": true, "method_by_default": true, "method_asked": "linear-or-both"' \
    "$tmp/out" || fail "--source-data without --method, known machine, --json: $(cat "$tmp/out")"
expect_rc 0 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/source.msgpack" --samples 3 \
    --source-data "$tmp/source.msgpack" --method retrain --json -o "$tmp/x.msgpack"
grep -q '"method": "retrain", "chosen_by_auto": false, "method_by_default": false' "$tmp/out" ||
    fail "--method retrain on a known machine: $(cat "$tmp/out")"
expect_rc 1 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --method retrain \
    --source-data "$tmp/missing.msgpack" -o "$tmp/x.msgpack"
grep -q "missing.msgpack" "$tmp/err" || fail "a missing --source-data file is not named: $(cat "$tmp/err")"
expect_rc 2 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --method retrain \
    --source-data "$tmp/source.msgpack" --retrain-copies 0 -o "$tmp/x.msgpack"
# A corrupt source dataset is found before anything is profiled.
echo "not a dataset" >"$tmp/corrupt.msgpack"
expect_rc 1 calibrate --model "$tmp/source_model.msgpack" --samples 2 --threads 1 --pool "$tmp/tiny.txt" --sampled 0 \
    --max-time-s 0.02 --source-data "$tmp/corrupt.msgpack" -o "$tmp/x.msgpack"
grep -q "corrupt.msgpack" "$tmp/err" || fail "a corrupt --source-data file is not named: $(cat "$tmp/err")"
grep -q "\[1/2\]" "$tmp/err" && fail "profiled before reading --source-data: $(cat "$tmp/err")"

# A MODEL.datasets sidecar names the model's datasets: calibrate then retrains by default,
# --method auto still calibrates, and a listed file that is missing falls back to linear-or-both (said
# on stderr), or fails when retrain was asked.
echo "source.msgpack" >"$tmp/source_model.datasets"
expect_rc 0 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --json -o "$tmp/x.msgpack"
grep -q '"method": "retrain"' "$tmp/out" || fail "sidecar, no --method: $(cat "$tmp/out")"
expect_rc 0 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --method auto --json \
    -o "$tmp/x.msgpack"
grep -q '"chosen_by_auto": true, "method_by_default": false, "method_asked": "auto"' "$tmp/out" ||
    fail "sidecar, --method auto: $(cat "$tmp/out")"
printf '# comment\n\nsource.msgpack\ngone.msgpack\n' >"$tmp/source_model.datasets"
expect_rc 0 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --json -o "$tmp/x.msgpack"
grep -q '"chosen_by_auto": true, "method_by_default": false, "method_asked": "linear-or-both"' "$tmp/out" ||
    fail "sidecar with a missing file: $(cat "$tmp/out")"
grep -q "gone.msgpack, which cannot be read; calibrating with linear-or-both" "$tmp/err" ||
    fail "sidecar with a missing file, no note: $(cat "$tmp/err")"
expect_rc 1 calibrate --model "$tmp/source_model.msgpack" --from-data "$tmp/samples.msgpack" --method retrain \
    -o "$tmp/x.msgpack"
grep -q "gone.msgpack" "$tmp/err" || fail "retrain with a missing sidecar file: $(cat "$tmp/err")"
rm "$tmp/source_model.datasets"

# A model of another CPU or cap: select's note and calibrate --if-needed say what sets this one
# apart (here the cap: the source ran under SSE4.1), and --if-needed calibrates.
"$convsel" --isa avx2 select --net "$tmp/tiny.txt" --threads 1 --model "$tmp/source_model.msgpack" --quiet \
    -o "$tmp/p.json" 2>"$tmp/err" >/dev/null || fail "select with the SSE4.1 model exited $?: $(cat "$tmp/err")"
grep -q "note: the model was trained on another CPU than this one (.*, avx2): this one differs in ISA cap avx2 against sse41; 'convsel calibrate' adapts it" \
    "$tmp/err" || fail "select with a model of another cap, the note: $(cat "$tmp/err")"
"$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 2 --threads 1 --pool "$tmp/tiny.txt" \
    --sampled 0 --max-time-s 0.02 --reorder-time-s 0 --if-needed -o "$tmp/x.msgpack" >"$tmp/out" 2>"$tmp/err" ||
    fail "--if-needed, another cap, exited $?: $(cat "$tmp/err")"
grep -q "^the model was trained on another CPU than this one (.*, avx2): this one differs in ISA cap avx2 against sse41: calibrating$" \
    "$tmp/out" || fail "--if-needed, another cap, not said: $(cat "$tmp/out")"
grep -q "^calibrated model " "$tmp/out" || fail "--if-needed, another cap: not calibrated: $(cat "$tmp/out")"

# --if-needed: a model of this CPU and cap is copied, unless its data ran OpenBLAS kernels of
# another instruction set than this process does (OPENBLAS_CORETYPE), which calibrates.
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
    OPENBLAS_CORETYPE=Nehalem "$convsel" profile --net "$tmp/tiny.txt" --threads 1 --max-time-s 0.02 --no-reorders \
        --quiet -o "$tmp/here.msgpack" >/dev/null 2>"$tmp/err" || fail "profile here exited $?: $(cat "$tmp/err")"
    "$convsel" train "$tmp/here.msgpack" -o "$tmp/here_model.msgpack" --params trees=20,valid_fraction=0 --quiet \
        >/dev/null 2>"$tmp/err" || fail "train here exited $?: $(cat "$tmp/err")"
    OPENBLAS_CORETYPE=Nehalem "$convsel" calibrate --model "$tmp/here_model.msgpack" --samples 2 --threads 1 \
        --pool "$tmp/tiny.txt" --sampled 0 --max-time-s 0.02 --if-needed -o "$tmp/x.msgpack" >"$tmp/out" 2>"$tmp/err" ||
        fail "--if-needed, same kernels, exited $?: $(cat "$tmp/err")"
    grep -q "the model already describes this CPU" "$tmp/out" || fail "--if-needed, same kernels: $(cat "$tmp/out")"
    cmp -s "$tmp/here_model.msgpack" "$tmp/x.msgpack" || fail "--if-needed, same kernels: the model was not copied"
    # With its datasets beside it, a model trained here is copied only for the thread counts they measured.
    echo "here.msgpack" >"$tmp/here_model.datasets"
    OPENBLAS_CORETYPE=Nehalem "$convsel" calibrate --model "$tmp/here_model.msgpack" --samples 2 --threads 1 \
        --pool "$tmp/tiny.txt" --sampled 0 --max-time-s 0.02 --if-needed -o "$tmp/x.msgpack" >"$tmp/out" 2>"$tmp/err" ||
        fail "--if-needed, datasets at 1 thread, asked 1, exited $?: $(cat "$tmp/err")"
    grep -q "the model already describes this CPU" "$tmp/out" || fail "--if-needed, datasets, 1 thread: $(cat "$tmp/out")"
    OPENBLAS_CORETYPE=Nehalem "$convsel" calibrate --model "$tmp/here_model.msgpack" --samples 2 --threads 1,2 \
        --pool "$tmp/tiny.txt" --sampled 0 --max-time-s 0.02 --reorder-time-s 0 --if-needed -o "$tmp/x.msgpack" \
        >"$tmp/out" 2>"$tmp/err" || fail "--if-needed, datasets at 1 thread, asked 1,2, exited $?: $(cat "$tmp/err")"
    grep -q "the model's datasets measured this CPU at 1 thread, not 2 threads: calibrating" "$tmp/out" ||
        fail "--if-needed, datasets at 1 thread, asked 1,2: $(cat "$tmp/out")"
    cmp -s "$tmp/here_model.msgpack" "$tmp/x.msgpack" && fail "--if-needed, asked 1,2 threads: the model is unchanged"
    rm "$tmp/here_model.datasets"
    "$convsel" calibrate --model "$tmp/here_model.msgpack" --samples 2 --threads 1 --pool "$tmp/tiny.txt" --sampled 0 \
        --max-time-s 0.02 --if-needed -o "$tmp/x.msgpack" >"$tmp/out" 2>"$tmp/err" ||
        fail "--if-needed, other kernels, exited $?: $(cat "$tmp/err")"
    grep -q "the model measured this CPU with OpenBLAS's sse41 kernels, this process runs its avx[0-9]* ones" \
        "$tmp/out" || fail "--if-needed, other kernels, not said: $(cat "$tmp/out")"
    grep -q "already describes" "$tmp/out" && fail "--if-needed, other kernels: copied: $(cat "$tmp/out")"
    cmp -s "$tmp/here_model.msgpack" "$tmp/x.msgpack" && fail "--if-needed, other kernels: the model is unchanged"
fi

# --if-needed on a model calibrated here: copied when it measured every --threads count asked,
# calibrated again when not; select at a thread count the calibration did not measure says so.
grep -q '"threads": \[1\]' <("$convsel" --isa avx2 calibrate --model "$tmp/source_model.msgpack" --samples 2 \
    --threads 1 --pool "$tmp/tiny.txt" --sampled 0 --max-time-s 0.02 --reorder-time-s 0 --json -o "$tmp/cal1.msgpack" \
    2>"$tmp/err") || fail "calibrate --json lacks the thread counts: $(cat "$tmp/err")"
"$convsel" --isa avx2 calibrate --model "$tmp/cal1.msgpack" --samples 2 --threads 1 --pool "$tmp/tiny.txt" \
    --sampled 0 --max-time-s 0.02 --if-needed -o "$tmp/x.msgpack" >"$tmp/out" 2>"$tmp/err" ||
    fail "--if-needed, calibrated at 1 thread, asked 1, exited $?: $(cat "$tmp/err")"
grep -q "the model already describes this CPU" "$tmp/out" || fail "--if-needed, asked 1 thread: $(cat "$tmp/out")"
cmp -s "$tmp/cal1.msgpack" "$tmp/x.msgpack" || fail "--if-needed, asked 1 thread: the model was not copied"
"$convsel" --isa avx2 calibrate --model "$tmp/cal1.msgpack" --samples 2 --threads 1,2 --pool "$tmp/tiny.txt" \
    --sampled 0 --max-time-s 0.02 --reorder-time-s 0 --if-needed -o "$tmp/x.msgpack" >"$tmp/out" 2>"$tmp/err" ||
    fail "--if-needed, calibrated at 1 thread, asked 1,2, exited $?: $(cat "$tmp/err")"
grep -q "the model's calibration measured this CPU at 1 thread, not 2 threads: calibrating" "$tmp/out" ||
    fail "--if-needed, asked 1,2 threads, not said: $(cat "$tmp/out")"
grep -q "already describes" "$tmp/out" && fail "--if-needed, asked 1,2 threads: copied: $(cat "$tmp/out")"
grep -q "^calibrated model .* at 1 and 2 threads$" "$tmp/out" || fail "--if-needed, asked 1,2: $(cat "$tmp/out")"
"$convsel" --isa avx2 select --net "$tmp/tiny.txt" --threads 2 --model "$tmp/cal1.msgpack" --quiet \
    -o "$tmp/p.json" 2>"$tmp/err" >/dev/null || fail "select at 2 threads exited $?: $(cat "$tmp/err")"
grep -q "note: the model's calibration measured this CPU at 1 thread, not 2 threads: its prices at 2 threads are extrapolated" "$tmp/err" ||
    fail "select at an uncalibrated thread count, no note: $(cat "$tmp/err")"
"$convsel" --isa avx2 select --net "$tmp/tiny.txt" --threads 1 --model "$tmp/cal1.msgpack" --quiet \
    -o "$tmp/p.json" 2>"$tmp/err" >/dev/null || fail "select at 1 thread exited $?: $(cat "$tmp/err")"
grep -q "note:" "$tmp/err" && fail "select at the calibrated thread count: $(cat "$tmp/err")"

# The calibrated model is a model: prediction under the calibrated cap works.
"$convsel" --isa avx2 predict --model "$tmp/cal.msgpack" 'mb1ic8ih8oc8oh8kh3ph1' >"$tmp/out" 2>"$tmp/err" ||
    fail "predict with the calibrated model exited $?: $(cat "$tmp/err")"

finish cli_calibrate
