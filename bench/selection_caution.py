#!/usr/bin/env python3
"""How much a caution premium on leaving oneDNN alone would change what a model picks, from a
`convsel eval --predictions` file (held-out predictions with --cv, or a model's predictions of a
target CPU's dataset).

    python3 bench/selection_caution.py PRED.csv [--premiums 0,0.05,0.1] [--networks-only]

Per configuration (desc, threads), the pick under premium g is the primitive of least
predicted_ms * (1 + g), except onednn_auto, which is priced as predicted (g = 0: the model's plain
pick). Scored with the measurements of the same file, per premium:

  vs auto     sum of onednn_auto's times / sum of the picks' times (a network of all the
              configurations, no reorders), and the geometric mean of the per-configuration ratio
  slower>3%   configurations whose pick is more than 3% slower than onednn_auto
  regret      mean and p95 of pick / fastest - 1 (onednn_auto a candidate too), and the sum of the
              picks' times over the sum of the fastest ones
  kept auto   share of configurations left to onednn_auto

Configurations without an onednn_auto record are skipped. --networks-only keeps configurations
named NETWORK:LAYER whose network is not a random sample ('random~N').
"""
import argparse, collections, csv, math, sys

ap = argparse.ArgumentParser()
ap.add_argument('csv')
ap.add_argument('--premiums', default='0,0.02,0.05,0.1,0.15,0.2,0.3,0.5')
ap.add_argument('--networks-only', action='store_true')
ap.add_argument('--label', default=None, help='a name for the file in the table (default: its path)')
a = ap.parse_args()
premiums = [float(x) for x in a.premiums.split(',')]

configs = collections.defaultdict(dict)
try:
    with open(a.csv, newline='') as f:
        for row in csv.DictReader(f):
            name = row['name']
            if a.networks_only and (':' not in name or name.startswith('random~')):
                continue
            key = (row['desc'], row['threads'])
            p = row['primitive']
            meas, pred = float(row['measured_ms']), float(row['predicted_ms'])
            if not (meas > 0 and pred > 0 and math.isfinite(meas) and math.isfinite(pred)):
                continue
            configs[key].setdefault(p, (meas, pred))  # the first record of a repeated primitive
except (OSError, KeyError, ValueError) as e:
    sys.exit(f'selection_caution: {a.csv}: {e}')
configs = {k: v for k, v in configs.items() if 'onednn_auto' in v and len(v) >= 2}
if not configs:
    sys.exit(f'selection_caution: {a.csv}: no configuration with onednn_auto and another primitive')


def pct(v, q):
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


label = a.label or a.csv
print(f'{label}: {len(configs)} configurations')
print('| premium | vs auto (sum) | vs auto (geo-mean) | slower > 3% | regret mean | regret p95 | sum / oracle | kept auto |')
print('|---|---|---|---|---|---|---|---|')
for g in premiums:
    sum_auto = sum_pick = sum_best = 0.0
    log_ratio = 0.0
    slower = kept = 0
    regrets = []
    for prims in configs.values():
        pick = min(prims, key=lambda p: (prims[p][1] * (1.0 if p == 'onednn_auto' else 1.0 + g), p != 'onednn_auto', p))
        auto = prims['onednn_auto'][0]
        meas = prims[pick][0]
        best = min(m for m, _ in prims.values())
        sum_auto += auto
        sum_pick += meas
        sum_best += best
        log_ratio += math.log(auto / meas)
        slower += meas > 1.03 * auto
        kept += pick == 'onednn_auto'
        regrets.append(meas / best - 1.0)
    n = len(configs)
    print(f'| {g:g} | {sum_auto / sum_pick:.3f}x | {math.exp(log_ratio / n):.3f}x | {slower / n:.1%} | '
          f'{sum(regrets) / n:.2%} | {pct(regrets, 0.95):.1%} | {sum_pick / sum_best:.3f} | {kept / n:.1%} |')
