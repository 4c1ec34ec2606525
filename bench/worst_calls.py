#!/usr/bin/env python3
"""Where a model's choices cost the most: for every configuration of a dataset, the primitive the
model ranks fastest (as `convsel predict` prices it) against the one measured fastest, the regret
of each, and which (picked, best) pairs the mean regret comes from.

    python3 bench/worst_calls.py MODEL DATA.msgpack [--isa avx2] [--top 25] [-o OUT.md]

DATA is scored on each record's minimum time; onednn_auto is left out, as in convsel eval.
The predictions are made on this machine under --isa (its CPU fingerprint), so DATA should have
been profiled here under the same cap.
"""
import argparse, collections, csv, io, os, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument('model'); ap.add_argument('data')
ap.add_argument('--isa', default='avx512'); ap.add_argument('--top', type=int, default=25)
ap.add_argument('-o', dest='out'); ap.add_argument('--convsel', default='build/convsel')
a = ap.parse_args()

exp = subprocess.run([a.convsel, 'dataset', 'export', '--csv', a.data], capture_output=True, text=True)
if exp.returncode != 0:
    sys.exit(f'worst_calls: cannot export {a.data}: {exp.stderr.strip()}')
meas = collections.defaultdict(dict)
for r in csv.DictReader(io.StringIO(exp.stdout)):
    if r['kind'] == 'conv' and r['primitive'] != 'onednn_auto':
        meas[(r['desc'], r['threads'])][r['primitive']] = float(r['min_ms'])

env = dict(os.environ, CONVSEL_ISA=a.isa)
rows = []
for (desc, threads), m in meas.items():
    if len(m) < 2:
        continue
    p = subprocess.run([a.convsel, 'predict', '--model', a.model, desc, '--threads', threads],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f'worst_calls: convsel predict {desc} failed: {p.stderr.strip()}')
    pred = {g.group(1): float(g.group(2)) for g in re.finditer(r'^\s*\d+\s+(\S+)\s+([\d.eE+-]+) ms', p.stdout, re.M)}
    cands = [k for k in m if k in pred]
    if len(cands) < 2:
        continue
    pick = min(cands, key=lambda k: pred[k])
    best = min(cands, key=lambda k: m[k])
    rows.append((m[pick] / m[best] - 1, desc, threads, pick, best, m[pick], pred[pick], m[best], pred[best]))

if not rows:
    sys.exit('worst_calls: no configuration with 2+ predicted primitives')
rows.sort(reverse=True)
n = len(rows)
out = [f'# Worst calls of `{a.model}` on `{a.data}` (--isa {a.isa})', '',
       f'{n} configurations; regret mean {100 * sum(r[0] for r in rows) / n:.2f}%, '
       f'top-1 {sum(r[0] == 0 for r in rows) / n:.3f}.', '',
       '| picked | best | share of the mean regret (points) | configurations |', '|---|---|---|---|']
contrib, count = collections.defaultdict(float), collections.Counter()
for r in rows:
    if r[0] > 0:
        contrib[(r[3], r[4])] += 100 * r[0] / n
        count[(r[3], r[4])] += 1
for (pk, bk), v in sorted(contrib.items(), key=lambda x: -x[1]):
    out.append(f'| {pk} | {bk} | {v:.2f} | {count[(pk, bk)]} |')
out += ['', f'The {min(a.top, n)} worst:', '',
        '| regret | configuration | threads | picked: measured / predicted ms | best: measured / predicted ms |',
        '|---|---|---|---|---|']
for r in rows[:a.top]:
    out.append(f'| {100 * r[0]:.0f}% | {r[1]} | {r[2]} | {r[3]}: {r[5]:.4g} / {r[6]:.4g} | {r[4]}: {r[7]:.4g} / {r[8]:.4g} |')
text = '\n'.join(out) + '\n'
if a.out:
    open(a.out, 'w').write(text)
print(text, end='')
