# Sourced by the CLI tests (tests/cli_*.sh) after they set `convsel` to the
# binary under test. Gives them one way to check and to report:
#   $tmp             a scratch folder, removed on exit (a test that needs more
#                    clean-up defines cli_cleanup and calls rm itself)
#   fail MSG         records a failure and goes on, so one run reports them all
#   die MSG          a failure after which the rest cannot run: exits now
#   expect_rc N ARGS runs `convsel ARGS` (stdout in $tmp/out, stderr in
#                    $tmp/err) and fails unless it exits N; an environment
#                    assignment before it (X=1 expect_rc ...) reaches convsel
#   finish NAME      the last line: prints the verdict, exits 1 after any failure
: "${convsel:?set convsel before sourcing shell_lib.sh}"
failed=0
tmp=$(mktemp -d)
cli_cleanup() { rm -rf "$tmp"; }
trap 'cli_cleanup' EXIT
fail() {
    echo "FAIL: $*" >&2
    failed=1
}
die() {
    echo "FAIL: $*" >&2
    exit 1
}
expect_rc() {
    local want=$1
    shift
    "$convsel" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [ $rc -eq "$want" ] || fail "convsel $* exited $rc, want $want: $(tail -5 "$tmp/err")"
}
finish() {
    if [ "$failed" -eq 0 ]; then
        echo "$1: all passed"
    else
        echo "$1: FAILED" >&2
    fi
    exit "$failed"
}
