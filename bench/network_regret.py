#!/usr/bin/env python3
"""Networks scored offline on a target CPU's dataset: for each network and thread count, the sum of
its layers' measured times when each layer runs the primitive a model predicts fastest, against
oneDNN alone (`onednn_auto` on every layer) and the per-layer oracle (the fastest measured).

    ./build/convsel eval --as-selector --model M --predictions M.csv TARGET.msgpack   # per model
    python3 bench/network_regret.py --net networks/resnet_50.txt ... [--mb 1] LABEL=M.csv ...

A label may name several CSVs joined by '+' (models of several calibration seeds): the table gives
their mean. The layers come from `convsel select --net FILE --quiet -o PLAN` (the repeated layers
included); a layer the dataset lacks is left out of every column, and counted. What this leaves
out: layouts and reorders (the selector's dynamic programming), and everything a whole network run
adds. It is the choice of primitives alone, priced with the target's own measurements, so it can
be computed for a CPU that is not at hand.
"""
import argparse, collections, csv, json, os, re, statistics, subprocess, sys, tempfile


def network_layers(convsel, path, mb):
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, 'plan.json')
        subprocess.run([convsel, 'select', '--net', path, '--mb', str(mb), '--quiet', '-o', plan], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        layers = json.load(open(plan))['layers']
    return [re.sub(r'_n".*"$', '', l['problem']) for l in layers]


def load(path):
    meas, pred = collections.defaultdict(dict), collections.defaultdict(dict)
    for r in csv.DictReader(open(path)):
        k = (r['desc'], r['threads'])
        meas[k][r['primitive']] = float(r['measured_ms'])
        pred[k][r['primitive']] = float(r['predicted_ms'])
    return meas, pred


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--net', action='append', required=True)
    ap.add_argument('--mb', type=int, default=1)
    ap.add_argument('--convsel', default='./build/convsel')
    ap.add_argument('models', nargs='+', help='LABEL=PRED.csv[+PRED2.csv...]')
    a = ap.parse_args()
    models = []
    for spec in a.models:
        label, paths = spec.rsplit('=', 1)
        models.append((label, [load(p) for p in paths.split('+')]))
    meas = models[0][1][0][0]
    threads = sorted({t for _, t in meas}, key=int)
    head = ['network', 'threads', 'layers', 'oneDNN alone / oracle'] + [f'{m[0]} / oracle' for m in models]
    print('| ' + ' | '.join(head) + ' |')
    print('|' + '---|' * len(head))
    sums = collections.defaultdict(list)
    for net in a.net:
        descs = network_layers(a.convsel, net, a.mb)
        name = os.path.basename(net)
        for t in threads:
            keys = [(d, t) for d in descs if (d, t) in meas and 'onednn_auto' in meas[(d, t)]]
            if not keys:
                continue
            oracle = sum(min(meas[k].values()) for k in keys)
            alone = sum(meas[k]['onednn_auto'] for k in keys)
            row = [name, t, f'{len(keys)} of {len(descs)}', f'{alone / oracle:.3f}']
            sums['oneDNN alone'].append(alone / oracle)
            for label, runs in models:
                ratios = []
                for m, p in runs:
                    total = 0.0
                    for k in keys:
                        cand = {q: v for q, v in p[k].items() if q in m[k]}
                        total += m[k][min(cand, key=cand.get)]
                    ratios.append(total / oracle)
                r = statistics.mean(ratios)
                sums[label].append(r)
                row.append(f'{r:.3f}')
            print('| ' + ' | '.join(str(x) for x in row) + ' |')
    print()
    print('geometric mean over the rows, time / oracle: ' + ', '.join(
        f'{k} {statistics.geometric_mean(v):.3f}' for k, v in sums.items()))


if __name__ == '__main__':
    sys.exit(main())
