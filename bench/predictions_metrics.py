#!/usr/bin/env python3
"""Ranking metrics from a `convsel eval --cv ... --predictions CSV` file, optionally leaving
configurations out: how much of a mean regret one configuration makes.

    python3 bench/predictions_metrics.py PRED.csv [--skip DESC,THREADS ...] [--worst N] [--small-ms MS]

A configuration is (desc, threads); onednn_auto is left out, as `convsel eval` does. Prints the
configurations, mean and p95 regret, top-1 and Spearman per configuration (ties take their mean
rank), and the N configurations of largest regret. With --small-ms: the share of the
configurations whose fastest primitive takes under MS milliseconds, and their share of the
summed regret (docs/learner.md, "Call-count and im2col features"). Tie handling and the p95 position differ a
little from convsel_metrics_compute: the figures agree with `convsel eval`'s to about 0.004.
"""
import argparse, collections, csv, sys

from rank_stats import spearman

ap = argparse.ArgumentParser()
ap.add_argument('csv')
ap.add_argument('--skip', action='append', default=[], help='DESC,THREADS of a configuration to leave out')
ap.add_argument('--worst', type=int, default=5)
ap.add_argument('--small-ms', type=float, help='report the share of configurations faster than this, and of regret')
a = ap.parse_args()
skip = set()
for s in a.skip:
    desc, _, threads = s.rpartition(',')
    if not desc:
        sys.exit(f'predictions_metrics: --skip wants DESC,THREADS (got {s!r})')
    skip.add((desc, threads))


groups = collections.defaultdict(list)
try:
    with open(a.csv) as f:
        for row in csv.DictReader(f):
            if row['primitive'] == 'onednn_auto':
                continue
            key = (row['desc'], row['threads'])
            if key not in skip:
                groups[key].append((float(row['measured_ms']), float(row['predicted_ms']), row['primitive'], row['name']))
except (OSError, KeyError, ValueError) as e:
    sys.exit(f'predictions_metrics: {a.csv}: {e}')

regrets, top1, rhos = [], 0, []
for key, v in groups.items():
    if len(v) < 2:
        continue
    best = min(x[0] for x in v)
    pick = min(v, key=lambda x: x[1])
    regrets.append((pick[0] / best - 1, key, pick[2], pick[3], best))
    top1 += pick[0] == best
    rho = spearman([x[0] for x in v], [x[1] for x in v])
    if rho is not None:
        rhos.append(rho)
if not regrets:
    sys.exit(f'predictions_metrics: {a.csv}: no configuration with 2+ primitives')
values = sorted(r[0] for r in regrets)
print(f'configurations {len(values)}  regret mean {100 * sum(values) / len(values):.2f}%  '
      f'p95 {100 * values[int(0.95 * (len(values) - 1))]:.2f}%  top-1 {top1 / len(values):.3f}  '
      f'Spearman {sum(rhos) / len(rhos):.3f}')
if a.small_ms is not None:
    small = [r for r in regrets if r[4] < a.small_ms]
    total = sum(r[0] for r in regrets)
    print(f'fastest under {a.small_ms:g} ms: {len(small)} of {len(regrets)} configurations '
          f'({100 * len(small) / len(regrets):.1f}%), '
          f'{100 * sum(r[0] for r in small) / total if total > 0 else 0:.1f}% of the summed regret')
for r, (desc, threads), prim, name, _ in sorted(regrets, reverse=True)[:a.worst]:
    print(f'  regret {100 * r:8.1f}%  picked {prim:18s} {name} ({desc}, {threads} thread(s))')
