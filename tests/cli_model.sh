#!/usr/bin/env bash
# convsel model: usage errors, a missing or corrupt file, and what it says of
# the shipped model, in text and JSON (a calibrated model's calibration is
# checked in cli_calibrate.sh). $1: the convsel binary.
set -u
convsel=${1:?usage: cli_model.sh path/to/convsel}
source "$(dirname "${BASH_SOURCE[0]}")/shell_lib.sh"
unset CONVSEL_ISA OPENBLAS_CORETYPE CONVSEL_MODEL

expect_rc 0 model --help
grep -q "^usage: convsel model" "$tmp/out" || fail "model --help prints no usage"
expect_rc 2 model --bogus
grep -q "'--bogus'" "$tmp/err" || fail "unknown option not named: $(cat "$tmp/err")"
expect_rc 2 model --model
expect_rc 1 model --model "$tmp/missing.msgpack"
grep -q "missing.msgpack" "$tmp/err" || fail "a missing file not named: $(cat "$tmp/err")"
printf 'not a model' >"$tmp/corrupt.msgpack"
expect_rc 1 model --model "$tmp/corrupt.msgpack"
grep -q "corrupt.msgpack" "$tmp/err" || fail "a corrupt file not named: $(cat "$tmp/err")"

# The shipped model (found next to the binary): its id, its primitives, the
# CPUs it was trained on, this CPU, and no calibration.
expect_rc 0 model
grep -Eq "^model [0-9a-f]{16}: [0-9]+ primitives \(" "$tmp/out" || fail "no model line: $(cat "$tmp/out")"
grep -Eq "^describes [0-9]+ CPU setups? \(" "$tmp/out" || fail "no CPUs: $(cat "$tmp/out")"
grep -q "^this CPU: " "$tmp/out" || fail "no line for this CPU: $(cat "$tmp/out")"
grep -q "^calibrations: 0$" "$tmp/out" || fail "the shipped model has no calibration: $(cat "$tmp/out")"
expect_rc 0 model --json
python3 - "$tmp/out" <<'PY' || failed=1
import json, sys
doc = json.load(open(sys.argv[1]))
errors = []
want = {"model", "primitives", "training", "cpus", "this_cpu", "describes_this_cpu", "calibrations"}
if set(doc) != want:
    errors.append("keys %s" % sorted(doc))
if len(doc.get("model", "")) != 16:
    errors.append("model id %r" % doc.get("model"))
if "onednn_direct" not in doc.get("primitives", []):
    errors.append("primitives %r" % doc.get("primitives"))
cpu_keys = {"vendor", "model_name", "microarch", "isa_cap", "cores", "l1d_bytes", "l2_bytes", "l3_bytes",
            "onednn_version", "openblas_version", "openblas_kernels"}
if not doc.get("cpus") or any(set(c) != cpu_keys for c in doc["cpus"] + [doc.get("this_cpu", {})]):
    errors.append("CPUs %r" % doc.get("cpus"))
if not isinstance(doc.get("describes_this_cpu"), bool) or doc.get("calibrations") != []:
    errors.append("describes %r, calibrations %r" % (doc.get("describes_this_cpu"), doc.get("calibrations")))
if doc.get("training", {}).get("bags", 0) < 1:
    errors.append("training %r" % doc.get("training"))
for e in errors:
    print("FAIL: model --json: " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
finish cli_model
