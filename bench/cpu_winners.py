#!/usr/bin/env python3
"""How differently two CPUs rank the primitives on the configurations both measured.

    convsel dataset export --csv -o a.csv data/intel_xeon.msgpack
    convsel dataset export --csv -o b.csv data/avx512_layers_t1.msgpack data/avx512_layers_t2.msgpack ...
    python3 bench/cpu_winners.py a.csv b.csv

A configuration is (desc, threads); onednn_auto is left out, as `convsel eval` does; a primitive
measured more than once keeps its lowest median. For the configurations in both files with at least
two primitives in common: how often the fastest primitive is the same, the regret on CPU A of
running CPU B's fastest (B's measurements as a perfect model of A: what no transfer at all would
cost), Spearman per configuration (ties broken by order, configurations of three or more
primitives), each CPU's winners, and the ratio of the fastest times (A / B).
"""
import collections, csv, sys


def load(path):
    d = collections.defaultdict(dict)
    for r in csv.DictReader(open(path)):
        if r['kind'] != 'conv' or r['primitive'] == 'onednn_auto':
            continue
        k, p, m = (r['desc'], r['threads']), r['primitive'], float(r['median_ms'])
        if p not in d[k] or m < d[k][p]:
            d[k][p] = m
    return d


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = load(sys.argv[1]), load(sys.argv[2])
    same, regret, rho, ratio = 0, [], [], []
    wins_a, wins_b = collections.Counter(), collections.Counter()
    for k in a:
        ps = sorted(p for p in a[k] if p in b.get(k, {}))
        if len(ps) < 2:
            continue
        ra = sorted(ps, key=lambda p: a[k][p])
        rb = sorted(ps, key=lambda p: b[k][p])
        wins_a[ra[0]] += 1
        wins_b[rb[0]] += 1
        same += ra[0] == rb[0]
        regret.append(a[k][rb[0]] / a[k][ra[0]] - 1)
        ratio.append(min(a[k].values()) / min(b[k].values()))
        n = len(ps)
        if n > 2:
            d2 = sum((ra.index(p) - rb.index(p)) ** 2 for p in ps)
            rho.append(1 - 6 * d2 / (n * (n * n - 1)))
    n = len(regret)
    if not n:
        sys.exit('no configuration in common')
    regret.sort()
    ratio.sort()
    print(f'configurations in common: {n}')
    print(f'same fastest primitive: {same} ({same / n:.1%})')
    print(f"regret on A of B's fastest: mean {sum(regret) / n:.2%}, median {regret[n // 2]:.2%}, "
          f'p90 {regret[int(0.9 * n)]:.1%}')
    print(f'Spearman per configuration: {sum(rho) / len(rho):.3f} ({len(rho)} configurations)')
    print(f'fastest time A / B: median {ratio[n // 2]:.2f}, p10 {ratio[n // 10]:.2f}, p90 {ratio[9 * n // 10]:.2f}')
    print('winners on A:', ', '.join(f'{p} {c}' for p, c in wins_a.most_common()))
    print('winners on B:', ', '.join(f'{p} {c}' for p, c in wins_b.most_common()))


if __name__ == '__main__':
    main()
