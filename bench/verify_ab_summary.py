#!/usr/bin/env python3
"""Summaries of bench/verify_ab.sh runs.

    python3 bench/verify_ab_summary.py ratios LOG...    # per network, threads and side: the means and
                                                        # ranges of verified / model plan, verified /
                                                        # oracle, verified / oneDNN alone and --check's
                                                        # verified / model plan
    python3 bench/verify_ab_summary.py switches DIR...  # per threads and side: the layers where the
                                                        # verified plan runs another primitive than the
                                                        # model's plan, and in how many runs

LOG is verify_ab.sh's printed output; DIR holds its run directories (ROUND.NET.MODEL.tT.SIDE/ with
model.layers.csv and verified.layers.csv, as `compare --plans` writes them).
"""
import collections
import csv
import glob
import os
import re
import statistics
import sys

LINE = re.compile(r'(\d+) (\S+) (\S+) (t\d) (\S+) plan ([\d.]+) verified ([\d.]+) oracle ([\d.]+) '
                  r'auto ([\d.]+) \| v/p ([\d.]+) (?:v/a [\d.]+ )?v/o ([\d.]+) \| check model ([\d.]+) verified ([\d.]+) '
                  r'\(([\d.]+)\) kept (.*)')


def ratios(logs):
    rows = []
    for log in logs:
        with open(log) as f:
            rows += [m.groups() for m in map(LINE.match, f) if m]
    if not rows:
        sys.exit('verify_ab_summary: no result lines in ' + ' '.join(logs))
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r[1], r[3], r[4])].append(r)
    for (net, t, side), rs in sorted(groups.items()):
        vp = [float(r[9]) for r in rs]
        vo = [float(r[10]) for r in rs]
        va = [float(r[6]) / float(r[8]) for r in rs]
        ck = [float(r[13]) for r in rs]
        kept = sum('verified' in r[14] for r in rs)
        print(f'{net:<14} {t} {side:<8} n={len(rs)}  verified/model {statistics.mean(vp):.3f} '
              f'[{min(vp):.3f}-{max(vp):.3f}]  verified/oracle {statistics.mean(vo):.3f} '
              f'[{min(vo):.3f}-{max(vo):.3f}]  verified/oneDNN alone {statistics.mean(va):.3f} '
              f'[{min(va):.3f}-{max(va):.3f}]  check verified/model {statistics.mean(ck):.3f}  '
              f'check kept the verified plan {kept}/{len(rs)}')


def primitives(path):
    with open(path) as f:
        return [(int(r['layer']), r['name'], r['primitive']) for r in csv.DictReader(f)]


def switches(dirs):
    counts = collections.Counter()
    runs = collections.Counter()
    for top in dirs:
        for run in sorted(glob.glob(os.path.join(top, '*', 'verified.layers.csv'))):
            d = os.path.dirname(run)
            parts = os.path.basename(d).split('.')
            key = (parts[1], parts[-2], parts[-1])
            runs[key] += 1
            for (i, name, a), (_, _, b) in zip(primitives(os.path.join(d, 'model.layers.csv')), primitives(run)):
                if a != b:
                    counts[key + (i, name, a, b)] += 1
    if not runs:
        sys.exit('verify_ab_summary: no verified.layers.csv under ' + ' '.join(dirs))
    for key, n in sorted(counts.items()):
        print(f'{key[0]} {key[1]} {key[2]:<8} layer {key[3]:>3} {key[4]:<32} {key[5]} -> {key[6]}  '
              f'{n}/{runs[key[:3]]} runs')


if __name__ == '__main__':
    if len(sys.argv) < 3 or sys.argv[1] not in ('ratios', 'switches'):
        sys.exit(__doc__)
    (ratios if sys.argv[1] == 'ratios' else switches)(sys.argv[2:])
