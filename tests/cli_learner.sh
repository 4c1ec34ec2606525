#!/usr/bin/env bash
# convsel train / eval / predict end to end on a small synthetic dataset
# (tests/synthetic_dataset.c, built next to the CLI): the validation curve,
# same seed -> same model bytes, metrics as JSON, ranked predictions, and the
# error paths (exit codes 1 and 2, messages naming the file). A few seconds.
set -u
convsel=${1:?usage: cli_learner.sh path/to/convsel}
GEN="$(dirname "$convsel")/synthetic_dataset"
source "$(dirname "${BASH_SOURCE[0]}")/shell_lib.sh"
[ -x "$GEN" ] || die "$GEN not built"
"$GEN" "$tmp/data.msgpack" 1 || die "cannot write the synthetic dataset"

# ---------------------------------------------------------------- train
quick=(--params trees=80,learning_rate=0.15,max_depth=5)
expect_rc 0 train "$tmp/data.msgpack" -o "$tmp/model.msgpack" "${quick[@]}" --seed 3 --every 20
grep -q "train_rmse" "$tmp/out" || fail "train prints no validation curve"
grep -q "^\[1/1\] all" "$tmp/out" || fail "train names no ensemble: $(head -3 "$tmp/out")"
grep -q "^\[1/1\] all, bag 3/3" "$tmp/out" || fail "train names no third bag: $(grep '^\[' "$tmp/out")"
grep -Eq "^ +20 +[0-9.]+ +[0-9.]+" "$tmp/out" || fail "no curve row at tree 20"
grep -q "wrote $tmp/model.msgpack" "$tmp/out" || fail "train does not report the file"
expect_rc 0 train "$tmp/data.msgpack" -o "$tmp/pp.msgpack" --params trees=20,mode=per_primitive
grep -q "^\[1/5\] direct_simd" "$tmp/out" || fail "train per primitive names no ensemble: $(head -3 "$tmp/out")"
expect_rc 0 train "$tmp/data.msgpack" -o "$tmp/model2.msgpack" "${quick[@]}" --seed 3 --quiet
[ ! -s "$tmp/out" ] || fail "--quiet printed: $(cat "$tmp/out")"
cmp -s "$tmp/model.msgpack" "$tmp/model2.msgpack" || fail "same data and seed, different model bytes"
expect_rc 0 train "$tmp/data.msgpack" -o "$tmp/model3.msgpack" "${quick[@]}" --seed 4 --quiet
cmp -s "$tmp/model.msgpack" "$tmp/model3.msgpack" && fail "different seeds, same model bytes"

expect_rc 2 train "$tmp/data.msgpack"
expect_rc 2 train -o "$tmp/x.msgpack"
expect_rc 2 train "$tmp/data.msgpack" -o "$tmp/no_dir/x.msgpack"
grep -q "no directory '$tmp/no_dir'" "$tmp/err" || fail "train -o into a missing directory: $(cat "$tmp/err")"
expect_rc 2 train "$tmp/data.msgpack" -o "$tmp/x.msgpack" --params depth=3
grep -q "unknown training parameter 'depth'" "$tmp/err" || fail "bad key not named: $(cat "$tmp/err")"
expect_rc 1 train "$tmp/none.msgpack" -o "$tmp/x.msgpack"
grep -q "$tmp/none.msgpack" "$tmp/err" || fail "missing data file not named"

# ---------------------------------------------------------------- eval
expect_rc 0 eval --model "$tmp/model.msgpack" --json "$tmp/data.msgpack"
for key in mape within10 spearman top1 regret_mean regret_p95; do
    grep -Eq "\"$key\": [-0-9.e]+" "$tmp/out" || fail "eval --json lacks $key: $(cat "$tmp/out")"
done
spearman=$(grep -o '"spearman": [0-9.]*' "$tmp/out" | awk '{print $2}')
awk -v s="$spearman" 'BEGIN { exit !(s > 0.8) }' || fail "training-set spearman $spearman"
expect_rc 0 eval --model "$tmp/model.msgpack" "$tmp/data.msgpack"
grep -q "^top-1" "$tmp/out" || fail "eval prints no table"
expect_rc 0 eval --cv random --params trees=40,learning_rate=0.2 --json "$tmp/data.msgpack"
grep -q '"top1"' "$tmp/out" || fail "cv prints no metrics"
expect_rc 0 eval --model "$tmp/model.msgpack" --cv by-network \
    --params trees=30,learning_rate=0.2 "$tmp/data.msgpack"
grep -q "cross-validation (by-network)" "$tmp/out" || fail "cv by-network header"
expect_rc 2 eval --cv bogus "$tmp/data.msgpack"
# --truth scores against another statistic; the synthetic data's minimum is not its median.
expect_rc 0 eval --model "$tmp/model.msgpack" --truth min --json "$tmp/data.msgpack"
min_mape=$(sed -n 's/.*"mape": \([-0-9.e]*\).*/\1/p' "$tmp/out")
expect_rc 0 eval --model "$tmp/model.msgpack" --truth median --json "$tmp/data.msgpack"
med_mape=$(sed -n 's/.*"mape": \([-0-9.e]*\).*/\1/p' "$tmp/out")
[ -n "$min_mape" ] && [ "$min_mape" != "$med_mape" ] || fail "--truth min and median gave the same MAPE ($min_mape)"
expect_rc 0 eval --cv random --params trees=20 --truth min --json "$tmp/data.msgpack"
expect_rc 2 eval --truth mean "$tmp/data.msgpack"
# --predictions: one row per scored record (with --cv, per held-out one), header first, and
# the metrics are made of them. check_predictions CSV LABEL reads the JSON eval left in $tmp/out.
check_predictions() {
    local csv=$1 label=$2 n_rec mape rows
    head -1 "$csv" | grep -qx "name,desc,threads,primitive,measured_ms,predicted_ms" ||
        fail "$label header: $(head -1 "$csv")"
    n_rec=$(sed -n 's/.*"n_records": \([0-9]*\).*/\1/p' "$tmp/out")
    mape=$(sed -n 's/.*"mape": \([-0-9.e]*\).*/\1/p' "$tmp/out")
    rows=$(($(wc -l <"$csv") - 1))
    [ -n "$n_rec" ] && [ "$rows" -eq "$n_rec" ] || fail "$label wrote $rows rows for $n_rec records"
    awk -F, -v m="$mape" 'NR > 1 { d = $6 - $5; s += (d < 0 ? -d : d) / $5; n++ }
        END { r = s / n; exit !(n > 0 && (r - m < 1e-4 * m) && (m - r < 1e-4 * m)) }' "$csv" ||
        fail "$label: MAPE is not the metrics' ($mape)"
}
expect_rc 0 eval --cv random --params trees=20 --predictions "$tmp/pred.csv" --json "$tmp/data.msgpack"
check_predictions "$tmp/pred.csv" "eval --cv --predictions"
# Without --cv: the model's prediction of every scored record.
expect_rc 0 eval --model "$tmp/model.msgpack" --predictions "$tmp/p2.csv" --json "$tmp/data.msgpack"
check_predictions "$tmp/p2.csv" "eval --predictions"
expect_rc 0 eval --model "$tmp/model.msgpack" --as-selector --json "$tmp/data.msgpack"
grep -q '"n_kernel_unknown"' "$tmp/out" || fail "eval --as-selector --json: no pricing counts: $(cat "$tmp/out")"
# Records without a kernel column, measured under another cap than this run's:
# priced as themselves, counted and warned about.
expect_rc 0 eval --isa sse41 --model "$tmp/model.msgpack" --as-selector "$tmp/data.msgpack"
grep -q "left out as reference loops, [1-9][0-9]* of unknown kernel" "$tmp/out" &&
    grep -q "no kernel recorded" "$tmp/err" || fail "eval --as-selector under another cap: $(cat "$tmp/out" "$tmp/err")"
expect_rc 2 eval --cv random --as-selector "$tmp/data.msgpack"
grep -q "goes without --cv" "$tmp/err" || fail "--as-selector with --cv: $(cat "$tmp/err")"
expect_rc 1 eval --model "$tmp/model.msgpack" --predictions "$tmp/no/such/dir.csv" "$tmp/data.msgpack"
[ -e "$tmp/no/such/dir.csv" ] && fail "a failed eval left a predictions file"
expect_rc 1 eval --cv random --params trees=5 --predictions "$tmp/no/such/dir.csv" "$tmp/data.msgpack"
grep -q "$tmp/no/such/dir.csv" "$tmp/err" || fail "unwritable --predictions not named: $(cat "$tmp/err")"
expect_rc 2 eval --model "$tmp/model.msgpack"

# ---------------------------------------------------------------- predict
expect_rc 0 predict --model "$tmp/model.msgpack" mb1ic64ih28oc64oh28kh3ph1 --threads 2
grep -q "winograd_4x4_3x3" "$tmp/out" || fail "predict misses a 3x3 primitive: $(cat "$tmp/out")"
grep -Eq "^ +1 +[a-z0-9_]+ +[0-9.]+ ms +1.00x" "$tmp/out" || fail "predict prints no ranking"
grep -q "no data for 'onednn_gemm'" "$tmp/err" || fail "no warning for a primitive the model lacks"
cat >"$tmp/net.txt" <<'EOF'
mb1ic32ih28oc32oh28kh3ph1n"tiny:a"
mb1ic32ih28oc64oh28kh1n"tiny:b"
EOF
expect_rc 0 predict --model "$tmp/model.msgpack" --net "$tmp/net.txt" --mb 2
[ "$(grep -c '^g1mb2' "$tmp/out")" -eq 2 ] || fail "predict --net prints $(grep -c '^g1mb2' "$tmp/out") layers, want 2"
grep -q "gemm_1x1" "$tmp/out" || fail "predict --net misses gemm_1x1 on the 1x1 layer"
expect_rc 2 predict --model "$tmp/model.msgpack"
expect_rc 2 predict --model "$tmp/model.msgpack" mb1ic64xx
head -c 100 "$tmp/model.msgpack" >"$tmp/cut.msgpack"
expect_rc 1 predict --model "$tmp/cut.msgpack" mb1ic64ih28oc64oh28kh3ph1
grep -q "$tmp/cut.msgpack" "$tmp/err" || fail "corrupt model not named: $(cat "$tmp/err")"
CONVSEL_MODEL="$tmp/none.msgpack" expect_rc 1 predict mb1ic64ih28oc64oh28kh3ph1
grep -q "none.msgpack" "$tmp/err" || fail "missing default model not explained: $(cat "$tmp/err")"
CONVSEL_MODEL="$tmp/model.msgpack" expect_rc 0 predict mb1ic64ih28oc64oh28kh3ph1
finish cli_learner
