#!/usr/bin/env python3
"""Which primitives a model confuses, from a `convsel eval --predictions CSV` file.

    python3 bench/top1_confusions.py PRED.csv [--pairs N] [--misses N]

A configuration is (desc, threads); onednn_auto is left out, as `convsel eval` does. Prints, for
each pair of primitives measured together, how often the model orders them the wrong way (and how
often when they are measured more than 10% apart), then the top-1 misses as "measured fastest ->
predicted fastest" counts with their share of the summed regret (docs/transfer.md, "Where the targets stand, at every K").
"""
import argparse, collections, csv, math

ap = argparse.ArgumentParser()
ap.add_argument('csv')
ap.add_argument('--pairs', type=int, default=10, help='pairs to print, most often misordered first')
ap.add_argument('--misses', type=int, default=10, help='kinds of top-1 miss to print')
a = ap.parse_args()

configs = collections.defaultdict(dict)
for r in csv.DictReader(open(a.csv)):
    if r['primitive'] != 'onednn_auto':
        configs[(r['desc'], r['threads'])][r['primitive']] = (float(r['measured_ms']), float(r['predicted_ms']))

seen, wrong, wrong_big, misses = (collections.Counter() for _ in range(4))
miss_regret = collections.Counter()  # summed regret of each kind of miss
total_regret = 0.0
for d in configs.values():
    names = sorted(d)
    for i, p in enumerate(names):
        for q in names[i + 1:]:
            (mp, pp), (mq, pq) = d[p], d[q]
            seen[p, q] += 1
            if (mp < mq) != (pp < pq):
                wrong[p, q] += 1
                wrong_big[p, q] += abs(math.log(mp / mq)) > math.log(1.1)
    if len(d) > 1:
        best = min(d, key=lambda p: d[p][0])
        picked = min(d, key=lambda p: d[p][1])
        if best != picked:
            regret = d[picked][0] / d[best][0] - 1
            misses[best, picked] += 1
            miss_regret[best, picked] += regret
            total_regret += regret

n_miss = sum(misses.values())
print(f'configurations {len(configs)}, top-1 misses {n_miss}, summed regret {total_regret:.3f}')
print('pair                                   misordered   share  of them >10% apart')
for (p, q), w in wrong.most_common(a.pairs):
    print(f'{p:<18} {q:<18} {w:5d}/{seen[p, q]:<5d} {w / seen[p, q]:6.2f}  {wrong_big[p, q]:5d}')
print('top-1 misses: measured fastest -> predicted fastest')
for (b, p), c in misses.most_common(a.misses):
    print(f'{b:<18} -> {p:<18} {c:4d}  ({c / max(n_miss, 1):.0%} of the misses, '
          f'{miss_regret[b, p] / max(total_regret, 1e-12):.0%} of the summed regret)')
