#!/usr/bin/env python3
"""How much of a model's regret on another CPU is the CPU's doing: on the configurations profiled on
both the source CPU (SOURCE datasets) and the target (TARGET dataset), the regret on the target of
choosing each configuration's primitive by

  - the source's measured times (perfect knowledge of the source CPU: the shift alone),
  - MODEL's predictions on the target's ISA cap (what `convsel select` would pick there),
  - MODEL's predictions on the source's ISA cap, scored on the source (the model's own error at home),

over the primitives measured on both, by shape family.

    python3 bench/transfer_shift.py MODEL TARGET.msgpack SOURCE.msgpack... [--isa avx2] [--source-isa avx512] [-o OUT.md]

onednn_auto is left out, as in convsel eval; each record is scored on its minimum time.
"""
import argparse, collections, csv, io, math, os, re, statistics, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument('model'); ap.add_argument('target'); ap.add_argument('sources', nargs='+')
ap.add_argument('--isa', default='avx2'); ap.add_argument('--source-isa', default='avx512')
ap.add_argument('-o', dest='out'); ap.add_argument('--convsel', default='build/convsel')
a = ap.parse_args()


def load(paths):
    times, info = collections.defaultdict(dict), {}
    for path in paths:
        exp = subprocess.run([a.convsel, 'dataset', 'export', '--csv', path], capture_output=True, text=True)
        if exp.returncode != 0:
            sys.exit(f'transfer_shift: cannot export {path}: {exp.stderr.strip()}')
        for r in csv.DictReader(io.StringIO(exp.stdout)):
            if r['kind'] == 'conv' and r['primitive'] != 'onednn_auto':
                key = (r['desc'], r['threads'])
                times[key][r['primitive']] = float(r['min_ms'])
                info[key] = r
    return times, info


def family(r):
    g, ic, oc, kh, kw, oh, ow = (int(r[x]) for x in ('g', 'ic', 'oc', 'kh', 'kw', 'oh', 'ow'))
    if g > 1 and g == ic and g == oc:
        return 'depthwise'
    kernel = '1x1' if kh * kw == 1 else '3x3' if (kh, kw) == (3, 3) else 'other kernel'
    return f'{kernel}, output {"≤ 64" if oh * ow <= 64 else "> 64"} pixels'


def predict(desc, threads, isa):
    env = dict(os.environ, CONVSEL_ISA=isa)
    p = subprocess.run([a.convsel, 'predict', '--model', a.model, desc, '--threads', threads],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f'transfer_shift: convsel predict {desc} failed: {p.stderr.strip()}')
    return {g.group(1): float(g.group(2)) for g in re.finditer(r'^\s*\d+\s+(\S+)\s+([\d.eE+-]+) ms', p.stdout, re.M)}


tgt, info = load([a.target])
src, _ = load(a.sources)
rows = []
for key in sorted(k for k in tgt if k in src):
    cands = [p for p in tgt[key] if p in src[key]]
    if len(cands) < 2:
        continue
    pt, ps = predict(key[0], key[1], a.isa), predict(key[0], key[1], a.source_isa)
    cands = [p for p in cands if p in pt and p in ps]
    if len(cands) < 2:
        continue
    best_t = min(tgt[key][p] for p in cands)
    best_s = min(src[key][p] for p in cands)
    regret = lambda pick, t, best: t[pick] / best - 1
    rows.append((family(info[key]),
                 regret(min(cands, key=lambda p: src[key][p]), tgt[key], best_t),
                 regret(min(cands, key=lambda p: pt[p]), tgt[key], best_t),
                 regret(min(cands, key=lambda p: ps[p]), src[key], best_s)))
if not rows:
    sys.exit('transfer_shift: no configuration profiled on both CPUs with 2+ common primitives')

out = [f'# What the CPU change costs: `{a.target}` (--isa {a.isa}) against `{" ".join(a.sources)}` '
       f'(--isa {a.source_isa})', '',
       f'`python3 bench/transfer_shift.py {a.model} {a.target} {" ".join(a.sources)} --isa {a.isa}`. '
       f'{len(rows)} configurations profiled on both; regret on a configuration = measured time of the '
       'pick / fastest - 1, over the primitives measured on both; means.', '',
       '| shape family | configurations | pick by the source\'s measured times, on the target (the shift alone) '
       f'| pick by `{os.path.basename(a.model)}` on the target | the same model on the source, scored there |',
       '|---|---|---|---|---|']
groups = collections.defaultdict(list)
for r in rows:
    groups[r[0]].append(r)
for name, g in sorted(groups.items(), key=lambda x: -len(x[1])) + [('all', rows)]:
    n = len(g)
    out.append(f'| {name} | {n} | {100 * sum(r[1] for r in g) / n:.1f}% | {100 * sum(r[2] for r in g) / n:.1f}% | '
               f'{100 * sum(r[3] for r in g) / n:.1f}% |')
# How one family's shift varies: the change of a pair's log time ratio between the CPUs.
pairs = (('gemm_1x1', 'onednn_gemm'), ('onednn_gemm', 'onednn_direct'), ('direct_simd', 'onednn_direct'))
out += ['', 'Change of log(time of A / time of B) from the source to the target, per family (10+ configurations):', '',
        '| A / B | shape family | configurations | median | interquartile range |', '|---|---|---|---|---|']
for pa, pb in pairs:
    by = collections.defaultdict(list)
    for key in tgt:
        if key in src and all(p in tgt[key] and p in src[key] for p in (pa, pb)):
            by[family(info[key])].append(math.log(tgt[key][pa] / tgt[key][pb]) - math.log(src[key][pa] / src[key][pb]))
    for fam, v in sorted(by.items()):
        if len(v) >= 10:
            q = statistics.quantiles(v, n=4)
            out.append(f'| {pa} / {pb} | {fam} | {len(v)} | {statistics.median(v):+.2f} | {q[0]:+.2f} to {q[2]:+.2f} |')
text = '\n'.join(out) + '\n'
if a.out:
    open(a.out, 'w').write(text)
print(text, end='')
