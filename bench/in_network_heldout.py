#!/usr/bin/env python3
"""How well ways of pricing a convolution inside a network, fitted on some networks, do on another.

The input is a CSV of convolutions each timed inside a network run end to end and alone on the same
buffers, one primitive at a time on every layer it computes (convsel_conv_probe, as `calibrate
--network-time-s` runs it; bench/results/in_network_weights_session37.c.txt writes this CSV):

    network,threads,primitive,layer,g,ic,oc,ih,oh,kh,sh,repeat,weights,network_ms,alone_ms

For each network held out in turn, per primitive and thread count, fitted on the other networks:
  none     the time alone, as profiled (what a model of times alone predicts)
  factor   alone × the geometric mean of network / alone, three samples' weight on 1 (session 36)
  weights  alone + price × the layer's plain weights in MB, price = Σ excess / (Σ MB + 1) (session 37)
  both     factor × alone + price × MB, least squares towards (1, 0) with three samples' weight
  w+act    alone + price × MB + a second price × the plain activations' MB (src + dst), least
           squares on the excess with one MB's weight towards 0 on each, both >= 0 (tried, not built)
Two scores on the held-out network: the error of the layers' times summed (Σ|predicted - network|
/ Σ network), and, what selection needs, the within-layer regret: on each layer, the primitive whose
priced time is least, its time in the network over the least time in the network, summed over the
layers (× repeat) - 1. Times alone here are measured, not a model's predictions, so the regret is the
pricing's own.

    python3 bench/in_network_heldout.py bench/results/in_network_weights_session37.csv
"""
import collections, csv, math, sys


def read(path):
    rows = []
    for r in csv.reader(open(path)):
        if not r or r[0] == 'network':
            continue
        net, threads, prim, layer = r[0], int(r[1]), r[2], ','.join(r[3:-11])
        g, ic, oc, ih, oh, kh, sh, rep, weights, net_ms, alone_ms = r[-11:]
        act = (int(ic) * int(ih) ** 2 + int(oc) * int(oh) ** 2) * 4e-6  # square images, as the CSV keeps h only
        rows.append(dict(net=net, t=threads, p=prim, layer=layer, rep=int(rep), mb=int(weights) * 4e-6, act=act,
                         nm=float(net_ms), am=float(alone_ms)))
    # The same layer name may occur more than once in a network: tell them apart by occurrence.
    seen = collections.Counter()
    for r in rows:
        key = (r['net'], r['t'], r['p'], r['layer'])
        r['layer'] = (r['layer'], seen[key])
        seen[key] += 1
    return rows


def fit(rows):
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(r['p'], r['t'])].append(r)
    fits = {}
    for key, g in groups.items():
        n = len(g)
        factor = math.exp(sum(math.log(r['nm'] / r['am']) for r in g) / (n + 3))
        price = max(0.0, sum(r['nm'] - r['am'] for r in g) / (sum(r['mb'] for r in g) + 1.0))
        aa = sum(r['am'] ** 2 for r in g); aw = sum(r['am'] * r['mb'] for r in g); ww = sum(r['mb'] ** 2 for r in g)
        an = sum(r['am'] * r['nm'] for r in g); wn = sum(r['mb'] * r['nm'] for r in g)
        ra, rw = 3 * aa / n, 3 * ww / n
        aa, ww, an = aa + ra, ww + rw, an + ra
        det = aa * ww - aw * aw
        a, b = (an * ww - wn * aw) / det, (aa * wn - aw * an) / det
        if not b > 0:
            a, b = an / aa, 0.0
        if not 0.5 <= a <= 4:
            a = min(4.0, max(0.5, a))
            b = (wn - a * aw) / ww
        ww2 = sum(r['mb'] ** 2 for r in g) + 1; cc = sum(r['act'] ** 2 for r in g) + 1
        wc = sum(r['mb'] * r['act'] for r in g)
        we = sum(r['mb'] * (r['nm'] - r['am']) for r in g); ce = sum(r['act'] * (r['nm'] - r['am']) for r in g)
        det2 = ww2 * cc - wc * wc
        pw, pc = (we * cc - ce * wc) / det2, (ww2 * ce - wc * we) / det2
        if pw < 0:
            pw, pc = 0.0, max(0.0, ce / cc)
        if pc < 0:
            pw, pc = max(0.0, we / ww2), 0.0
        fits[key] = dict(factor=factor, price=price, a=a, b=min(1.0, max(0.0, b)), pw=pw, pc=pc)
    return fits


WAYS = ('none', 'factor', 'weights', 'both', 'w+act')


def priced(way, f, r):
    return {'none': r['am'], 'factor': r['am'] * f['factor'], 'weights': r['am'] + f['price'] * r['mb'],
            'both': f['a'] * r['am'] + f['b'] * r['mb'],
            'w+act': r['am'] + f['pw'] * r['mb'] + f['pc'] * r['act']}[way]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = read(sys.argv[1])
    nets = sorted(set(r['net'] for r in rows))
    print('| network | threads | layers | ' + ' | '.join(f'{w} error' for w in WAYS) + ' | ' +
          ' | '.join(f'{w} regret' for w in WAYS) + ' |')
    print('|---|---|---|' + '---|' * (2 * len(WAYS)))
    for t in sorted(set(r['t'] for r in rows)):
        for held in nets:
            test = [r for r in rows if r['net'] == held and r['t'] == t]
            fits = fit([r for r in rows if r['net'] != held and r['t'] == t])
            test = [r for r in test if (r['p'], t) in fits]
            if not test:
                continue
            err = {w: sum(abs(priced(w, fits[(r['p'], t)], r) - r['nm']) for r in test) / sum(r['nm'] for r in test)
                   for w in WAYS}
            layers = collections.defaultdict(list)
            for r in test:
                layers[r['layer']].append(r)
            best, chosen = 0.0, dict.fromkeys(WAYS, 0.0)
            for cands in layers.values():
                if len(cands) < 2:
                    continue
                best += min(r['nm'] for r in cands) * cands[0]['rep']
                for w in WAYS:
                    pick = min(cands, key=lambda r: priced(w, fits[(r['p'], t)], r))
                    chosen[w] += pick['nm'] * cands[0]['rep']
            print(f'| {held} | {t} | {len(layers)} | ' + ' | '.join(f'{100 * err[w]:.1f}%' for w in WAYS) + ' | ' +
                  ' | '.join(f'+{100 * (chosen[w] / best - 1):.2f}%' for w in WAYS) + ' |')


if __name__ == '__main__':
    main()
