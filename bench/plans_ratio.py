#!/usr/bin/env python3
"""Each plans directory's time against the first's (or another's), per network, from the summary table of
`convsel run --plans D1 --plans D2 ... --baseline` (what bench/run_batch.sh writes): with the oracle's
plans first (`bash bench/run_batch.sh -m oracle -m MODEL ...`), each model's distance to the oracle.

    python3 bench/plans_ratio.py RUN_BATCH_OUTPUT.txt [--within 0.03] [--against K]

Prints the per-network ratios, then per directory: the median and geometric mean, how many networks
are within the bound of the first directory's time, and the networks beyond it. --against K compares
with the K-th directory instead of the first (the oracle's, when it was given last)."""
import math
import re
import statistics
import sys


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    path, within, ref = argv[1], 0.03, 0
    args = argv[2:]
    while args:
        if len(args) < 2 or args[0] not in ("--within", "--against"):
            sys.exit(__doc__)
        if args[0] == "--within":
            within = float(args[1])
        else:
            ref = int(args[1]) - 1
        args = args[2:]
    rows, header = [], None
    with open(path) as f:
        for line in f:
            if re.match(r"^network\s+layers\s+plan1_ms", line):
                header = line.split()
                n_plans = sum(1 for h in header if re.match(r"^plan\d+_ms$", h))
                continue
            if header is None:
                continue
            cells = line.split()
            if len(cells) >= 2 and cells[1] == "failed":  # a network that did not run: no times
                continue
            if len(cells) < len(header) or not re.match(r"^\d+$", cells[1]):
                if rows:
                    break  # the legend after the table
                continue
            rows.append((cells[0], [float(c) for c in cells[2:2 + n_plans]]))
    if not rows:
        sys.exit(f"{path}: no summary table of convsel run --plans")
    n_plans = len(rows[0][1])
    if n_plans < 2:
        sys.exit(f"{path}: one plans directory, nothing to compare")
    if not 0 <= ref < n_plans:
        sys.exit(f"{path}: --against {ref + 1}, but the table has {n_plans} plans directories")
    others = [d for d in range(n_plans) if d != ref]
    print(f"{'network':28s}" + "".join(f" {f'{d + 1}_vs_{ref + 1}':>8s}" for d in others))
    for name, ms in rows:
        print(f"{name:28s}" + "".join(f" {ms[d] / ms[ref]:8.3f}" for d in others))
    for d in others:
        ratios = [(name, ms[d] / ms[ref]) for name, ms in rows]
        values = [r for _, r in ratios]
        geo = math.exp(sum(math.log(v) for v in values) / len(values))
        near = sum(1 for v in values if v <= 1 + within)
        beyond = ", ".join(f"{n} ({r:.3f})" for n, r in ratios if r > 1 + within) or "none"
        print(f"plans {d + 1} against plans {ref + 1}: median {statistics.median(values):.3f}, geometric mean {geo:.3f} "
              f"over {len(values)} networks; within {100 * within:g}% on {near}; beyond: {beyond}")


if __name__ == "__main__":
    main(sys.argv)
