#!/usr/bin/env bash
# convsel profile and convsel dataset, end to end: a tiny profile, its info,
# shards merged, a kill -9 mid-run that --resume completes, Ctrl-C that
# prints the resume command, and the error paths. Keeps to tiny layers and
# short timing caps: well under 20 s.
set -u
convsel=${1:?usage: cli_profile.sh path/to/convsel}
source "$(dirname "${BASH_SOURCE[0]}")/shell_lib.sh"
bg=
cli_cleanup() {
    [ -n "$bg" ] && kill -9 "$bg" 2>/dev/null
    rm -rf "$tmp"
}
json_field() { # file key -> the integer value of "key" in a one-object JSON file
    grep -o "\"$2\": [0-9]*" "$1" | head -1 | awk '{print $2}'
}
configs_in() {
    "$convsel" dataset info --json "$1" >"$tmp/poll.json" 2>/dev/null && json_field "$tmp/poll.json" configs
}
records_in() { # file -> its record count
    "$convsel" dataset info --json "$1" >"$tmp/poll.json" 2>/dev/null && json_field "$tmp/poll.json" records
}
fps_in() { # file -> how many fingerprints `dataset info` lists
    "$convsel" dataset info "$1" 2>/dev/null | grep -c '^  fingerprint '
}

fast=(--max-time-s 0.05 --quiet)

# ---------------------------------------------------------------- a tiny profile
cat >"$tmp/net.txt" <<'EOF'
# two tiny layers, one of them twice: profiled once
mb1ic8ih10oc16oh10kh3ph1n"tiny:conv3x3"
mb1ic16ih5oc8oh5kh1n"tiny:conv1x1"
mb1ic8ih10oc16oh10kh3ph1n"tiny:conv3x3_again"
EOF
expect_rc 0 profile --net "$tmp/net.txt" "${fast[@]}" -o "$tmp/a.msgpack"
expect_rc 0 dataset info --json "$tmp/a.msgpack"
cp "$tmp/out" "$tmp/a.json"
if command -v python3 >/dev/null; then
    python3 - "$tmp/a.json" <<'EOF' || fail "dataset info --json: not the expected JSON"
import json, sys
info = json.load(open(sys.argv[1]))
assert info["configs"] == 2, info["configs"]
assert info["problems"] == 2
assert info["records"] == info["conv_records"] + info["reorder_records"]
assert info["conv_records"] >= 2 and len(info["primitives"]) >= 2, info["primitives"]
assert info["isa"] and len(info["fingerprints"]) == 1 and info["fingerprints"][0]["cores"] >= 1
assert info["threads"] == [1] and info["warning"] == ""
EOF
fi
[ "$(json_field "$tmp/a.json" configs)" = 2 ] || fail "want 2 configurations: $(cat "$tmp/a.json")"
records_a=$(json_field "$tmp/a.json" records)

# The file exists: refused without --resume/--force; --resume has nothing to do.
expect_rc 1 profile --net "$tmp/net.txt" "${fast[@]}" -o "$tmp/a.msgpack"
grep -q "exists" "$tmp/err" || fail "no 'exists' message: $(cat "$tmp/err")"
expect_rc 0 profile --net "$tmp/net.txt" "${fast[@]}" --resume -o "$tmp/a.msgpack"
"$convsel" dataset info --json "$tmp/a.msgpack" >"$tmp/a2.json" || fail "info after resume"
[ "$(json_field "$tmp/a2.json" records)" = "$records_a" ] || fail "a resume of a complete file changed it"

# CSV export: a header and one row per record.
expect_rc 0 dataset export --csv "$tmp/a.msgpack"
head -1 "$tmp/out" | grep -q "^file,kind,tensor,name,desc," || fail "CSV header: $(head -1 "$tmp/out")"
[ "$(($(wc -l <"$tmp/out") - 1))" = "$records_a" ] || fail "CSV rows != records"
# Each convolution record names the kernel that ran it: a catalogue primitive,
# the primitive itself unless it is one of oneDNN's (which may run as its gemm
# code or its reference loops); reorders name none.
"$convsel" primitives | awk 'NR > 1 {print $1}' >"$tmp/names"
if command -v python3 >/dev/null; then
    python3 - "$tmp/out" "$tmp/names" <<'EOF' || fail "CSV kernel column"
import csv, sys
names = set(open(sys.argv[2]).read().split())
rows = list(csv.DictReader(open(sys.argv[1])))
conv = [r for r in rows if r["kind"] == "conv"]
assert conv, "no conv rows"
for r in rows:
    k = r["kernel"]
    if r["kind"] == "reorder":
        assert k == "", r
    elif not r["primitive"].startswith("onednn_"):
        assert k == r["primitive"], (r["primitive"], k)
    else:
        assert k in names, (r["primitive"], k)
EOF
fi

# ---------------------------------------------------------------- shards, merge, split
for i in 0 1; do
    expect_rc 0 profile --net "$tmp/net.txt" --shard "$i/2" --primitives onednn_gemm \
        --no-reorders "${fast[@]}" -o "$tmp/shard$i.msgpack"
done
expect_rc 0 dataset merge -o "$tmp/merged.msgpack" "$tmp/shard0.msgpack" "$tmp/shard1.msgpack" \
    "$tmp/shard0.msgpack"
grep -q "duplicates dropped" "$tmp/err" || fail "merge summary: $(cat "$tmp/err")"
[ "$(configs_in "$tmp/merged.msgpack")" = 2 ] || fail "the shards do not partition the configurations"
[ "$(configs_in "$tmp/shard0.msgpack")" != "$(configs_in "$tmp/merged.msgpack")" ] ||
    [ "$(configs_in "$tmp/shard1.msgpack")" = 0 ] || fail "shard 0 has everything and shard 1 something"
# A shard resumed from a file that holds other shards' configurations (how a
# campaign split over machines or cores is finished: data/README.md): it
# measures only its own missing ones, and nothing when the file has them all.
cp "$tmp/shard0.msgpack" "$tmp/resumed.msgpack"
expect_rc 0 profile --net "$tmp/net.txt" --shard 1/2 --primitives onednn_gemm --no-reorders "${fast[@]}" \
    --resume -o "$tmp/resumed.msgpack"
[ "$(configs_in "$tmp/resumed.msgpack")" = 2 ] && [ "$(records_in "$tmp/resumed.msgpack")" = "$(records_in "$tmp/merged.msgpack")" ] ||
    fail "shard 1 resumed from shard 0's file: want both configurations, each measured once"
cp "$tmp/merged.msgpack" "$tmp/resumed_all.msgpack"
expect_rc 0 profile --net "$tmp/net.txt" --shard 0/2 --primitives onednn_gemm --no-reorders "${fast[@]}" \
    --resume -o "$tmp/resumed_all.msgpack"
[ "$(records_in "$tmp/resumed_all.msgpack")" = "$(records_in "$tmp/merged.msgpack")" ] ||
    fail "resuming a complete file added records"
expect_rc 0 dataset split --test-frac 0.5 --seed 3 -o "$tmp/part" "$tmp/a.msgpack"
[ "$(configs_in "$tmp/part-train.msgpack")" = 1 ] && [ "$(configs_in "$tmp/part-test.msgpack")" = 1 ] ||
    fail "split: want one configuration on each side"

# ---------------------------------------------------------------- filter: threads, primitives, fingerprints
# The tiny profile again under another ISA cap: a second fingerprint once merged.
expect_rc 0 profile --net "$tmp/net.txt" --primitives onednn_gemm,im2col_gemm --no-reorders "${fast[@]}" \
    -o "$tmp/capped.msgpack" --isa sse41
expect_rc 0 dataset merge -o "$tmp/two_fp.msgpack" "$tmp/a.msgpack" "$tmp/capped.msgpack"
[ "$(fps_in "$tmp/two_fp.msgpack")" = 2 ] || fail "merged file: want two fingerprints"
expect_rc 0 dataset filter --fingerprint 1 -o "$tmp/fp1.msgpack" "$tmp/two_fp.msgpack"
[ "$(fps_in "$tmp/fp1.msgpack")" = 1 ] || fail "filter --fingerprint 1: want one fingerprint"
[ "$(records_in "$tmp/fp1.msgpack")" = "$(records_in "$tmp/capped.msgpack")" ] ||
    fail "filter --fingerprint 1: want the capped profile's records"
"$convsel" dataset info "$tmp/fp1.msgpack" | grep -q "ISA cap sse41" || fail "filter --fingerprint 1 kept the wrong one"
expect_rc 0 dataset filter --fingerprint 0,1 -o "$tmp/fp01.msgpack" "$tmp/two_fp.msgpack"
[ "$(records_in "$tmp/fp01.msgpack")" = "$(records_in "$tmp/two_fp.msgpack")" ] || fail "filter --fingerprint 0,1 dropped records"
expect_rc 0 dataset filter --primitives im2col_gemm --fingerprint 1 -o "$tmp/p1.msgpack" "$tmp/two_fp.msgpack"
n_im2col=$("$convsel" dataset export --csv "$tmp/capped.msgpack" | grep -c ',im2col_gemm,')
[ "$(records_in "$tmp/p1.msgpack")" = "$n_im2col" ] || fail "filter --primitives with --fingerprint: want $n_im2col records"
threads_of_a=$("$convsel" dataset export --csv "$tmp/a.msgpack" | awk -F, 'NR > 1 && $2 == "conv" {print $25}' | sort -u)
[ "$threads_of_a" = 1 ] || fail "the tiny profile's thread counts: '$threads_of_a', want 1"
expect_rc 0 dataset filter --threads 2 --fingerprint 0 -o "$tmp/t2.msgpack" "$tmp/two_fp.msgpack"
[ "$(records_in "$tmp/t2.msgpack")" = 0 ] || fail "filter --threads 2: the profile ran 1 thread only"
expect_rc 2 dataset filter --fingerprint 2 -o "$tmp/bad.msgpack" "$tmp/two_fp.msgpack"
grep -q "has 2 fingerprint(s), 0 to 1" "$tmp/err" || fail "filter --fingerprint 2: $(cat "$tmp/err")"
expect_rc 2 dataset filter --fingerprint one -o "$tmp/bad.msgpack" "$tmp/two_fp.msgpack"
expect_rc 2 dataset filter -o "$tmp/bad.msgpack" "$tmp/two_fp.msgpack"
grep -q "needs --threads, --primitives and/or --fingerprint" "$tmp/err" || fail "filter without a criterion: $(cat "$tmp/err")"
[ ! -e "$tmp/bad.msgpack" ] || fail "a refused filter wrote a file"

# ---------------------------------------------------------------- --redo: measure disturbed configurations again
# Two shapes at 1 and 2 threads, no reorders. Ratio 0 flags every configuration
# (a median is always over 0 x its minimum), a huge one none: the selection by
# ratio itself is test_dataset's (synthetic records, exact thresholds).
cat >"$tmp/redo.txt" <<'NET'
mb1ic8ih8oc8oh8kh3ph1n"redo:a"
mb1ic8ih6oc16oh6kh1n"redo:b"
NET
quick=(--primitives onednn_gemm,im2col_gemm --max-time-s 0.02 --warmup-s 0)
expect_rc 0 profile --net "$tmp/redo.txt" --threads 1,2 --no-reorders "${quick[@]}" --quiet -o "$tmp/b.msgpack"
expect_rc 0 profile --redo "$tmp/b.msgpack" --redo-ratio 1e6 "${quick[@]}" -o "$tmp/r0.msgpack"
grep -q "nothing to measure again" "$tmp/err" || fail "--redo with nothing to redo: $(cat "$tmp/err")"
[ ! -e "$tmp/r0.msgpack" ] || fail "--redo with nothing to redo wrote a file"
expect_rc 0 profile --redo "$tmp/b.msgpack" --redo-ratio 0 --threads 2 "${quick[@]}" --quiet -o "$tmp/r2.msgpack"
expect_rc 0 dataset info --json "$tmp/r2.msgpack"
grep -q '"threads": \[2\]' "$tmp/out" && [ "$(json_field "$tmp/out" configs)" = 2 ] &&
    [ "$(json_field "$tmp/out" reorder_records)" = 0 ] ||
    fail "--redo --threads 2: want the two 2-thread configurations, no reorders: $(cat "$tmp/out")"
expect_rc 0 profile --redo "$tmp/b.msgpack" --redo-ratio 0 "${quick[@]}" -o "$tmp/r.msgpack"
grep -q "measuring again 4 configurations" "$tmp/err" && grep -q "dataset merge -o CLEAN.msgpack" "$tmp/err" ||
    fail "--redo messages: $(cat "$tmp/err")"
# Every configuration again at its own thread count, under its own name, with
# the same primitives and layouts; merged first, the new records replace every
# old one.
"$convsel" dataset export --csv "$tmp/b.msgpack" | cut -d, -f2-27 | sort >"$tmp/b.keys"
"$convsel" dataset export --csv "$tmp/r.msgpack" | cut -d, -f2-27 | sort >"$tmp/r.keys"
[ -s "$tmp/b.keys" ] && cmp -s "$tmp/b.keys" "$tmp/r.keys" ||
    fail "--redo measured other records than the file's: $(diff "$tmp/b.keys" "$tmp/r.keys" | head -5)"
expect_rc 0 dataset merge -o "$tmp/clean.msgpack" "$tmp/r.msgpack" "$tmp/b.msgpack"
"$convsel" dataset export --csv "$tmp/r.msgpack" | cut -d, -f2- >"$tmp/r.rows"
"$convsel" dataset export --csv "$tmp/clean.msgpack" | cut -d, -f2- >"$tmp/clean.rows"
cmp -s "$tmp/r.rows" "$tmp/clean.rows" || fail "merge did not keep exactly the re-measured records"
# Records whose thread counts alternate (t1, t2, t1, t2: merged from four
# files) are still each measured again at their own thread count.
for s in a b; do
    sed -n "/redo:$s/p" "$tmp/redo.txt" >"$tmp/one_$s.txt"
    for t in 1 2; do
        expect_rc 0 profile --net "$tmp/one_$s.txt" --threads $t --no-reorders "${quick[@]}" --quiet -o "$tmp/one_$s$t.msgpack"
    done
done
expect_rc 0 dataset merge -o "$tmp/alt.msgpack" "$tmp/one_a1.msgpack" "$tmp/one_a2.msgpack" "$tmp/one_b1.msgpack" \
    "$tmp/one_b2.msgpack"
"$convsel" dataset export --csv "$tmp/alt.msgpack" | cut -d, -f25 | tail -n +2 | tr '\n' ' ' | grep -q "^1 1 2 2 1 1 2 2 " ||
    fail "the merged file does not alternate thread counts: $("$convsel" dataset export --csv "$tmp/alt.msgpack" | cut -d, -f25 | tr '\n' ' ')"
expect_rc 0 profile --redo "$tmp/alt.msgpack" --redo-ratio 0 "${quick[@]}" --quiet -o "$tmp/alt_r.msgpack"
"$convsel" dataset export --csv "$tmp/alt.msgpack" | cut -d, -f2-27 | sort >"$tmp/alt.keys"
"$convsel" dataset export --csv "$tmp/alt_r.msgpack" | cut -d, -f2-27 | sort >"$tmp/alt_r.keys"
cmp -s "$tmp/alt.keys" "$tmp/alt_r.keys" ||
    fail "--redo of alternating thread counts: $(diff "$tmp/alt.keys" "$tmp/alt_r.keys" | head -5)"
# A file from another CPU (the synthetic one's fingerprint is made up): left out, said so.
gen="$(dirname "$convsel")/synthetic_dataset"
if [ -x "$gen" ]; then
    "$gen" "$tmp/syn.msgpack" 5 || fail "synthetic_dataset failed"
    expect_rc 0 profile --redo "$tmp/syn.msgpack" --redo-ratio 0 "${quick[@]}" -o "$tmp/rs.msgpack"
    grep -q "measured on another CPU" "$tmp/err" && [ ! -e "$tmp/rs.msgpack" ] ||
        fail "--redo of another CPU's file: $(cat "$tmp/err")"
fi
expect_rc 2 profile --redo "$tmp/b.msgpack" --net "$tmp/redo.txt" -o "$tmp/x.msgpack"
expect_rc 2 profile --redo "$tmp/b.msgpack" --redo-ratio -1 -o "$tmp/x.msgpack"
expect_rc 2 profile --redo "$tmp/b.msgpack" --shard 0/2 -o "$tmp/x.msgpack"
expect_rc 1 profile --redo "$tmp/nosuch.msgpack" -o "$tmp/x.msgpack"
grep -q "nosuch.msgpack" "$tmp/err" || fail "--redo of a missing file: $(cat "$tmp/err")"
expect_rc 1 profile --redo "$tmp/redo.txt" -o "$tmp/x.msgpack"
grep -q "not a convsel dataset" "$tmp/err" || fail "--redo of a foreign file: $(cat "$tmp/err")"
[ ! -e "$tmp/x.msgpack" ] || fail "a failed --redo left a file"

# ---------------------------------------------------------------- kill -9, then --resume, then Ctrl-C
cat >"$tmp/six.txt" <<'EOF'
mb1ic8ih8oc8oh8kh3ph1n"six:a"
mb1ic8ih9oc8oh9kh3ph1n"six:b"
mb1ic8ih10oc8oh10kh3ph1n"six:c"
mb1ic8ih11oc8oh11kh3ph1n"six:d"
mb1ic8ih12oc8oh12kh3ph1n"six:e"
mb1ic8ih13oc8oh13kh3ph1n"six:f"
EOF
six=(--net "$tmp/six.txt" --max-time-s 0.1 --primitives onednn,gemm -o "$tmp/six.msgpack")
"$convsel" profile "${six[@]}" --quiet 2>"$tmp/kill.err" &
bg=$!
for _ in $(seq 1 200); do
    n=$(configs_in "$tmp/six.msgpack")
    [ -n "$n" ] && [ "$n" -ge 1 ] && break
    sleep 0.05
done
kill -9 "$bg" 2>/dev/null
wait "$bg" 2>/dev/null
bg=
killed=$(configs_in "$tmp/six.msgpack")
[ -n "$killed" ] && [ "$killed" -ge 1 ] || fail "no whole configuration survived kill -9"
echo "kill -9 left $killed of 6 configurations"

"$convsel" profile "${six[@]}" --resume 2>"$tmp/int.err" &
bg=$!
for _ in $(seq 1 200); do
    n=$(configs_in "$tmp/six.msgpack")
    [ -n "$n" ] && [ "$n" -gt "$killed" ] && break
    sleep 0.05
done
kill -INT "$bg"
wait "$bg"
rc=$?
bg=
if [ "$(configs_in "$tmp/six.msgpack")" -lt 6 ]; then
    [ "$rc" -eq 1 ] || fail "interrupted profile: exit $rc, want 1"
    grep -q "resume with:" "$tmp/int.err" || fail "no resume command: $(cat "$tmp/int.err")"
    resume=$(grep -A1 "resume with:" "$tmp/int.err" | tail -1)
    case "$resume" in *--resume*) ;; *) fail "resume command lacks --resume: $resume" ;; esac
    # The printed command starts with "convsel": run it with this binary.
    eval "\"$convsel\" ${resume#*convsel }" >/dev/null 2>"$tmp/resume.err" || fail "the printed resume command failed: $(cat "$tmp/resume.err")"
else
    [ "$rc" -eq 0 ] || fail "a profile that finished before the signal: exit $rc"
fi
expect_rc 0 dataset info --json "$tmp/six.msgpack"
cp "$tmp/out" "$tmp/six.json"
[ "$(json_field "$tmp/six.json" configs)" = 6 ] || fail "resume did not complete the profile: $(cat "$tmp/six.json")"
grep -q '"warning": ""' "$tmp/six.json" || fail "the resumed file still has a torn tail"
# Each configuration exactly once: no measurement twice.
"$convsel" dataset export --csv "$tmp/six.msgpack" | cut -d, -f2,3,5,22-25 | sort | uniq -d >"$tmp/dups"
[ ! -s "$tmp/dups" ] || fail "measurements recorded twice: $(head -3 "$tmp/dups")"

# ---------------------------------------------------------------- budget and errors
expect_rc 0 profile --net "$tmp/six.txt" --budget-s 0.000001 -o "$tmp/budget.msgpack"
grep -q "budget reached" "$tmp/err" && grep -q -- "--resume" "$tmp/err" || fail "budget message: $(cat "$tmp/err")"

expect_rc 2 profile --net "$tmp/net.txt"
expect_rc 2 profile --net "$tmp/net.txt" --shard 2/2 -o "$tmp/x.msgpack"
expect_rc 2 profile --net "$tmp/net.txt" --primitives nosuch -o "$tmp/x.msgpack"
expect_rc 1 profile --net "$tmp/nosuch.txt" -o "$tmp/x.msgpack"
expect_rc 1 dataset info "$tmp/nosuch.msgpack"
grep -q "nosuch.msgpack" "$tmp/err" || fail "the error does not name the file: $(cat "$tmp/err")"
expect_rc 1 dataset info "$tmp/net.txt"
grep -q "net.txt: byte offset 0: not a convsel dataset" "$tmp/err" || fail "foreign file message: $(cat "$tmp/err")"
expect_rc 1 dataset merge -o "$tmp/m.msgpack" "$tmp/a.msgpack" "$tmp/net.txt"
expect_rc 2 dataset
expect_rc 0 dataset --help
expect_rc 0 profile --help
finish cli_profile
