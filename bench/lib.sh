# shellcheck shell=bash
# Sourced, not run, by the bench/*.sh scripts, after their `set -euo pipefail`:
#   # shellcheck source-path=SCRIPTDIR
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# What they share:
#   cd_repo_root       moves to the repository root; the scripts' default paths and the paths
#                      given to their options are relative to it
#   convsel_path       prints the convsel binary to run: $CONVSEL, else ./build/convsel
#   require_built BIN  exits 1, naming the script and BIN, unless BIN is an executable file
#   make_tmp           makes a scratch folder, $tmp, removed when the script exits
#   cpu_model          prints the CPU's model name from /proc/cpuinfo (fails when it has none)
#   die STATUS MSG     prints MSG on stderr and exits with STATUS

cd_repo_root() {
    # This file's folder is bench/; the root is its parent.
    cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit
}

convsel_path() {
    printf '%s\n' "${CONVSEL:-./build/convsel}"
}

require_built() {
    [ -x "$1" ] || die 1 "${0##*/}: $1 not built"
}

make_tmp() {
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
}

cpu_model() {
    grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'
}

die() {
    local status=$1
    shift
    printf '%s\n' "$*" >&2
    exit "$status"
}
