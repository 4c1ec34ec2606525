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
#   cpu_setup BIN      prints one line of what a timing ran on: the CPU family and model numbers
#                      (a VM's model name can hide them: "AMD EPYC" is Zen 4 at family 25, Zen 5 at
#                      26), the L3 glibc reports, and BIN's ISA, oneDNN ISA and OpenBLAS core with
#                      OPENBLAS_CORETYPE, which holds OpenBLAS's kernels (and the GEMM primitives)
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

cpu_setup() {
    local family model l3 tools
    family=$(grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2- | tr -d ' ')
    model=$(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2- | tr -d ' ')
    l3=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || true)
    tools=$("$1" --version | sed -n 's/^\(isa\|onednn isa\|openblas core\): /\1 /p' | paste -sd ';' | sed 's/;/; /g')
    printf '%s (family %s, model %s, L3 %s MiB by glibc); %s; OPENBLAS_CORETYPE %s\n' "$(cpu_model)" \
        "${family:-?}" "${model:-?}" "$((${l3:-0} / 1048576))" "$tools" "${OPENBLAS_CORETYPE:-unset}"
}

die() {
    local status=$1
    shift
    printf '%s\n' "$*" >&2
    exit "$status"
}
