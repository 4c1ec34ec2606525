#!/usr/bin/env python3
"""Where a network's time goes, from `convsel compare --plans DIR` (NAME.layers.csv per plan).

    ./build/convsel compare --net networks/resnet_50.txt --mb 1 --verify 3 --check --plans DIR --json
    python3 bench/plan_layers.py summary DIR...          # per plan: predicted, alone, in-network sums
    python3 bench/plan_layers.py diff DIR [A B]          # the layers where plans A and B differ
    python3 bench/plan_layers.py margin DIR...           # the verified plan with a switch margin, priced in place
    python3 bench/plan_layers.py reorders DIR [PLAN...]  # each reorder: the price it was chosen by, in network

summary: each plan's sums of the costs it was chosen by (predicted conv + reorders), of the oracle's
measurement of its primitives timed alone, and of the median in-network convolution + reorder time;
then per primitive, alone against in-network. diff (A = model, B = verified by default): every layer
where the two plans run different primitives or layouts, alone and in-network, and the in-network sums
over the differing and the common layers (the common layers' difference is what the two runners'
instances and contexts do to identical layers: the noise floor). margin: for the model and verified
plans of each DIR, the in-network sum of the plan that takes the verified choice on a layer only where
the oracle's alone measurement has it faster than the model's choice by more than M (0, 2, 5, 10%):
a proxy for a switch margin in --verify, priced with the runs' own in-network times.
reorders (PLAN = model by default): every layer whose input is reordered in that plan, the reorder's
predicted price against its median in-network time, in microseconds, then per plan the count, the sums
and the median of in-network / predicted (how far the model's reorder prices are from this CPU's).
"""
import collections, csv, os, statistics, sys


def rows(d, name):
    path = os.path.join(d, name + '.layers.csv')
    try:
        with open(path) as fh:
            return list(csv.DictReader(fh))
    except OSError as e:
        sys.exit(f'plan_layers: cannot read {path}: {e.strerror}')


def f(r, k):
    return float(r[k])


def summary(dirs):
    for d in dirs:
        print(f'== {d}')
        for name in ('model', 'verified', 'oracle', 'checked', 'onednn_auto', 'single_best'):
            if not os.path.exists(os.path.join(d, name + '.layers.csv')):
                continue
            rs = rows(d, name)
            s = lambda k: sum(f(r, k) for r in rs)
            print(f'{name:12} predicted {s("predicted_conv_ms"):7.2f} + {s("predicted_reorder_ms"):5.2f}   '
                  f'alone {s("alone_conv_ms"):7.2f}   in network {s("network_conv_ms"):7.2f} + '
                  f'{s("network_reorder_ms"):5.2f}')
            by = collections.defaultdict(lambda: [0, 0.0, 0.0])
            for r in rs:
                b = by[r['primitive']]
                b[0] += 1
                b[1] += f(r, 'alone_conv_ms')
                b[2] += f(r, 'network_conv_ms')
            for p, (n, a, w) in sorted(by.items()):
                print(f'    {p:18} {n:2} layers  alone {a:6.2f}  in network {w:6.2f}  ({w / a:.2f}x)')


def diff(d, a='model', b='verified'):
    ra, rb = rows(d, a), rows(d, b)
    diff_a = diff_b = same_a = same_b = 0.0
    print(f'{"#":>3} {"layer":24} {a + " (alone / in network)":44} {b + " (alone / in network)":44}')
    for x, y in zip(ra, rb):
        nx = f(x, 'network_conv_ms') + f(x, 'network_reorder_ms')
        ny = f(y, 'network_conv_ms') + f(y, 'network_reorder_ms')
        if (x['primitive'], x['src_layout']) == (y['primitive'], y['src_layout']):
            same_a += nx
            same_b += ny
            continue
        diff_a += nx
        diff_b += ny
        cell = lambda r, n: f'{r["primitive"][:16]:16} {r["src_layout"]:8} {f(r, "alone_conv_ms"):6.3f} / {n:6.3f}'
        print(f'{x["layer"]:>3} {x["name"].split(":")[-1][:24]:24} {cell(x, nx):44} {cell(y, ny):44}')
    print(f'in network: differing layers {a} {diff_a:.2f}, {b} {diff_b:.2f}; '
          f'common layers {a} {same_a:.2f}, {b} {same_b:.2f} ms')


def margin(dirs):
    ms = (0.0, 0.02, 0.05, 0.10)
    print(f'{"run":44} {"model":>7} {"verified":>8} ' + ' '.join(f'M={100 * m:>3.0f}%' for m in ms))
    for d in dirs:
        rm, rv = rows(d, 'model'), rows(d, 'verified')
        tot_m = tot_v = 0.0
        tot = dict.fromkeys(ms, 0.0)
        for x, y in zip(rm, rv):
            nx = f(x, 'network_conv_ms') + f(x, 'network_reorder_ms')
            ny = f(y, 'network_conv_ms') + f(y, 'network_reorder_ms')
            tot_m += nx
            tot_v += ny
            gain = f(x, 'alone_conv_ms') / f(y, 'alone_conv_ms') - 1.0 if x['primitive'] != y['primitive'] else 0.0
            for m in ms:
                tot[m] += ny if gain > m else nx
        print(f'{d:44} {tot_m:7.2f} {tot_v:8.2f} ' + ' '.join(f'{tot[m]:6.2f}' for m in ms))


def reorders(d, plans):
    for name in plans or ['model']:
        rs = [r for r in rows(d, name) if f(r, 'predicted_reorder_ms') > 0 or f(r, 'network_reorder_ms') > 0]
        print(f'== {d} {name}: {len(rs)} reorders')
        us = [(1e3 * f(r, 'predicted_reorder_ms'), 1e3 * f(r, 'network_reorder_ms')) for r in rs]
        ratios = [n / p if p > 0 else float('inf') for p, n in us]
        for r, (p, n), ratio in zip(rs, us, ratios):
            print(f'{r["layer"]:>3} {r["name"].split(":")[-1][:28]:28} {r["primitive"][:16]:16} {r["src_layout"]:8} '
                  f'predicted {p:8.2f} us   in network {n:8.2f} us   ({ratio:.2f}x)')
        if rs:
            print(f'sum: predicted {sum(p for p, _ in us):.1f} us, in network {sum(n for _, n in us):.1f} us; '
                  f'median in network / predicted {statistics.median(ratios):.2f}x')


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ('summary', 'diff', 'margin', 'reorders'):
        sys.exit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == 'summary':
        summary(args)
    elif cmd == 'diff':
        diff(*args[:3])
    elif cmd == 'reorders':
        reorders(args[0], args[1:])
    else:
        margin(args)


if __name__ == '__main__':
    main()
