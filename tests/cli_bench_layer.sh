#!/usr/bin/env bash
# convsel bench-layer: exit codes, error messages, and the --json document.
# $1: the convsel binary.
set -u
convsel=${1:?usage: cli_bench_layer.sh path/to/convsel}
source "$(dirname "${BASH_SOURCE[0]}")/shell_lib.sh"

"$convsel" bench-layer --help >"$tmp/out" 2>&1 || fail "--help exited $?"
grep -q "usage: convsel bench-layer" "$tmp/out" || fail "--help prints no usage"

"$convsel" bench-layer >/dev/null 2>&1
[ $? -eq 2 ] || fail "no descriptor should exit 2"

"$convsel" bench-layer mb1ic256ih56oc256oh56kh3xz >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] || fail "bad descriptor exited $rc, want 2"
grep -q "'xz'" "$tmp/err" || fail "bad descriptor: message does not name 'xz': $(cat "$tmp/err")"

for desc in mb1ic8id8oc8od8kd3 mb1ic8iw8oc8ow8kw3; do
    "$convsel" bench-layer "$desc" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || fail "$desc exited $rc, want 2"
    grep -q "not supported" "$tmp/err" || fail "$desc: no 'not supported' message: $(cat "$tmp/err")"
done

"$convsel" bench-layer mb1ic8ih8oc8oh8kh3ph1 --threads 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "--threads 0 should exit 2"
"$convsel" bench-layer mb1ic8ih8oc8oh8kh3ph1 --primitives no_such_primitive >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] || fail "unknown primitive should exit 2"
grep -q "no_such_primitive" "$tmp/err" || fail "unknown primitive not named: $(cat "$tmp/err")"
"$convsel" bench-layer mb1ic8ih8oc8oh8kh3ph1 --frobnicate >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown option should exit 2"
for bad in -1 1025 4k; do
    "$convsel" bench-layer mb1ic8ih8oc8oh8kh3ph1 --flush "$bad" >/dev/null 2>"$tmp/err"
    [ $? -eq 2 ] || fail "--flush $bad should exit 2"
    grep -q -- "--flush" "$tmp/err" || fail "--flush $bad: message does not name the option: $(cat "$tmp/err")"
done
# With a flush before every timed run: the same document, every applicable
# primitive timed.
"$convsel" bench-layer mb1ic8ih8oc8oh8kh3ph1 --flush 2 --json --max-time 0.1 --warmup 0.005 >"$tmp/flush" \
    2>"$tmp/err" || fail "--flush 2 exited $?: $(cat "$tmp/err")"
python3 - "$tmp/flush" <<'EOF2' || fail "--flush 2: bad document: $(cat "$tmp/flush")"
import json, sys
doc = json.load(open(sys.argv[1]))
timed = [r for r in doc["results"] if r.get("applicable")]
assert len(timed) >= 3 and all(0 < r["min_ms"] <= r["median_ms"] for r in timed), timed
EOF2

# --json on a tiny layer: valid JSON with the documented keys, every
# non-reference primitive listed, the applicable ones first and fastest first,
# and the applicable set equal to what 'convsel primitives' + applicability say.
"$convsel" bench-layer 'mb1ic8ih8oc8oh8kh3ph1n"tiny:x"' --json --max-time 0.2 --warmup 0.005 \
    >"$tmp/json" 2>"$tmp/err" || fail "--json exited $?: $(cat "$tmp/err")"
"$convsel" primitives >"$tmp/prims" || fail "convsel primitives exited $?"
python3 - "$tmp/json" "$tmp/prims" <<'EOF' || failed=1
import json, sys
doc = json.load(open(sys.argv[1]))
prims = [l.split()[0] for l in open(sys.argv[2]).read().splitlines()[1:] if l.strip()]
nonref = [l.split()[0] for l in open(sys.argv[2]).read().splitlines()[1:]
          if l.strip() and "reference" not in l.split()[1]]
errors = []
if set(doc) != {"problem", "threads", "results"}:
    errors.append("top-level keys %s" % sorted(doc))
if doc.get("problem") != 'g1mb1_ic8ih8iw8_oc8oh8ow8_kh3kw3_sh1sw1_ph1pw1_dh0dw0_n"tiny:x"':
    errors.append("problem %r" % doc.get("problem"))
if doc.get("threads") != 1:
    errors.append("threads %r" % doc.get("threads"))
results = doc.get("results", [])
names = [r.get("primitive") for r in results]
if sorted(names) != sorted(nonref):
    errors.append("listed %s, want the non-reference primitives %s" % (names, nonref))
seen_inapplicable = False
last = 0.0
applicable = 0
for r in results:
    if r.get("applicable") is True:
        applicable += 1
        want = {"primitive", "family", "applicable", "min_ms", "median_ms", "gflops", "src_layout", "dst_layout",
                "weights_bytes"}
        if set(r) != want:
            errors.append("keys of %s: %s" % (r.get("primitive"), sorted(r)))
            continue
        if seen_inapplicable:
            errors.append("%s listed after an inapplicable one" % r["primitive"])
        if not (0 < r["min_ms"] <= r["median_ms"] and r["gflops"] > 0):
            errors.append("%s: min %r median %r gflops %r" % (r["primitive"], r["min_ms"], r["median_ms"], r["gflops"]))
        if r["median_ms"] < last:
            errors.append("%s not sorted by median" % r["primitive"])
        last = r["median_ms"]
        for k in ("src_layout", "dst_layout"):
            if r[k] not in ("nchw", "nhwc", "nChw8c", "nChw16c"):
                errors.append("%s: %s %r" % (r["primitive"], k, r[k]))
        # 8x8x3x3 plain weights are 2304 bytes: the GEMM family keeps them
        # as they are, F(4,3) Winograd its 6x6 transforms (4x at least),
        # every primitive at least the plain ones.
        wb, plain = r["weights_bytes"], 8 * 8 * 3 * 3 * 4
        if not isinstance(wb, int) or wb < plain:
            errors.append("%s: weights_bytes %r, plain ones are %d" % (r["primitive"], wb, plain))
        elif r["family"] == "gemm" and wb != plain:
            errors.append("%s keeps %d bytes of plain weights, not %d" % (r["primitive"], wb, plain))
        elif r["primitive"] == "winograd_4x4_3x3" and wb < 4 * plain:
            errors.append("winograd_4x4_3x3 keeps %d bytes, less than its transforms' %d" % (wb, 4 * plain))
    elif r.get("applicable") is False:
        seen_inapplicable = True
        if set(r) != {"primitive", "family", "applicable", "reason"} or not r["reason"]:
            errors.append("inapplicable entry %r" % r)
    else:
        errors.append("applicable of %r" % r)
if nonref and applicable == 0:
    errors.append("no applicable primitive on a plain 3x3 layer")
for e in errors:
    print("FAIL: json: " + e, file=sys.stderr)
sys.exit(1 if errors else 0)
EOF

# The table: a header and the reference only when asked for.
"$convsel" bench-layer mb1ic8ih8oc8oh8kh3ph1 --primitives reference --max-time 0.1 --warmup 0.005 \
    >"$tmp/out" 2>&1 || fail "table exited $?"
grep -q "median ms" "$tmp/out" || fail "table has no header"
grep -q "^reference " "$tmp/out" || fail "reference not listed when selected: $(cat "$tmp/out")"

finish cli_bench_layer
