#!/usr/bin/env python3
"""Two profiles of the same configurations, primitive by primitive: the ratio of their
times, and how often they agree on the fastest primitive.

    ./build/convsel dataset export --csv -o A.csv A.msgpack
    ./build/convsel dataset export --csv -o B.csv B.msgpack
    python3 bench/dataset_ratios.py A.csv B.csv [--stat median_ms] [--leave-out P1,P2]

A configuration is (desc, threads); only configurations and primitives both files
measured count, onednn_auto left out of the fastest (a dispatcher to another kernel, as
`convsel eval` leaves it out). Prints, per primitive, the median, p10 and p90 of B's time
over A's; the configurations each primitive wins in each file; the share of
configurations whose fastest is the same; the mean regret of taking A's fastest on B;
and the same share with the --leave-out primitives removed from both. Used for
data/README.md, "OpenBLAS's kernels on Zen 5".
"""
import argparse, collections, csv, statistics, sys

ap = argparse.ArgumentParser()
ap.add_argument('a')
ap.add_argument('b')
ap.add_argument('--stat', default='median_ms', choices=('min_ms', 'p10_ms', 'median_ms'))
ap.add_argument('--leave-out', default='gemm_1x1,im2col_gemm',
                help='primitives to leave out for the second agreement figure (comma-separated)')
a = ap.parse_args()


def load(path):
    t = collections.defaultdict(dict)
    with open(path, newline='') as f:
        for r in csv.DictReader(f):
            if r['kind'] != 'conv':
                continue
            ms = float(r[a.stat])
            if ms > 0:
                t[(r['desc'], r['threads'])][r['primitive']] = ms
    return t


def quantile(v, q):
    v = sorted(v)
    i = q * (len(v) - 1)
    lo = int(i)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)


def fastest(times, leave):
    c = {p: ms for p, ms in times.items() if p != 'onednn_auto' and p not in leave}
    return min(c, key=c.get) if len(c) >= 2 else None


ta, tb = load(a.a), load(a.b)
shared = sorted(set(ta) & set(tb))
if not shared:
    sys.exit('dataset_ratios: the two files share no configuration')
ratios = collections.defaultdict(list)
wins_a, wins_b = collections.Counter(), collections.Counter()
same = same_left = n = n_left = 0
regret = []
leave = set(filter(None, a.leave_out.split(',')))
for key in shared:
    common = set(ta[key]) & set(tb[key])
    for p in common:
        ratios[p].append(tb[key][p] / ta[key][p])
    xa = {p: ta[key][p] for p in common}
    xb = {p: tb[key][p] for p in common}
    fa, fb = fastest(xa, set()), fastest(xb, set())
    if fa and fb:
        n += 1
        wins_a[fa] += 1
        wins_b[fb] += 1
        same += fa == fb
        regret.append(xb[fa] / xb[fb] - 1)
    la, lb = fastest(xa, leave), fastest(xb, leave)
    if la and lb:
        n_left += 1
        same_left += la == lb

print(f'{len(shared)} configurations in both files; {a.stat}; B = {a.b} over A = {a.a}\n')
print('| primitive | configurations | median ratio | p10 | p90 | fastest in A | fastest in B |')
print('|---|---|---|---|---|---|---|')
for p in sorted(ratios, key=lambda p: -len(ratios[p])):
    v = ratios[p]
    print(f'| `{p}` | {len(v)} | {statistics.median(v):.3f} | {quantile(v, 0.1):.3f} | {quantile(v, 0.9):.3f} '
          f'| {wins_a[p]} | {wins_b[p]} |')
print(f'\nthe same fastest primitive: {same} of {n} ({100 * same / n:.1f}%); '
      f"A's fastest taken on B: mean regret {100 * statistics.mean(regret):.2f}%")
if leave:
    print(f'without {", ".join(sorted(leave))}: the same fastest in {same_left} of {n_left} '
          f'({100 * same_left / max(n_left, 1):.1f}%)')
