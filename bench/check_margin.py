#!/usr/bin/env python3
"""Would `--check` do better if it kept oneDNN alone unless another finalist beat it by a margin?
Replayed offline on `convsel compare --json` rows that ran the check (`-c`).

    python3 bench/check_margin.py [--margins 0.01,0.02,0.03,0.05] FILE.jsonl...

For each row, the check's own medians (check_model_plan_ms, check_verified_ms, check_onednn_alone_ms
and check_without) say which finalist was fastest. Under margin m the check would keep oneDNN alone
wherever its median is within (1 + m) of the fastest one's; only the rows where that changes what was
kept ("switched") are scored, with compare's own end-to-end times, taken afterwards in one process:

  ratio     checked_ms / onednn_auto_ms: above 1, keeping oneDNN alone would have been faster
  helps     switched rows with ratio > 1.01; hurts: ratio < 0.99
  geo       geometric mean of ratio over the switched rows (above 1: the margin pays on average)

Rows without the check's columns are skipped. No timing: only what the files hold.
"""
import argparse, json, math, sys

ap = argparse.ArgumentParser()
ap.add_argument('files', nargs='+')
ap.add_argument('--margins', default='0.01,0.02,0.03,0.05')
ap.add_argument('--list', type=float, default=None, help='print the switched rows of this margin')
a = ap.parse_args()
margins = [float(x) for x in a.margins.split(',')]

rows = []
for path in a.files:
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                r = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f'{path}:{n}: not JSON: {e}')
            alone = r.get('check_onednn_alone_ms')
            if not alone or not r.get('checked_ms') or not r.get('onednn_auto_ms') or 'check_kept' not in r:
                continue
            others = [r.get('check_model_plan_ms'), r.get('check_verified_ms')]
            others += list((r.get('check_without') or {}).values())
            others = [x for x in others if x]
            rows.append((path, r, alone, min(others + [alone])))
if not rows:
    sys.exit('no row with the check\'s columns (compare --check --json)')

print(f'{len(rows)} compare rows with the check, from {len(a.files)} files\n')
print('| margin | switched to oneDNN alone | helps (>1%) | hurts (>1%) | geo checked/onednn_auto |')
print('|---|---|---|---|---|')
listed = []
for m in margins:
    ratios = []
    for path, r, alone, best in rows:
        if r['check_kept'] != 'oneDNN alone' and best < alone <= (1 + m) * best:
            ratios.append((r['checked_ms'] / r['onednn_auto_ms'], path, r, alone / best))
    geo = math.exp(sum(math.log(x[0]) for x in ratios) / len(ratios)) if ratios else 1.0
    print(f'| {m:g} | {len(ratios)} | {sum(x[0] > 1.01 for x in ratios)} | {sum(x[0] < 0.99 for x in ratios)} '
          f'| {geo:.3f} |')
    if a.list is not None and abs(a.list - m) < 1e-12:
        listed = ratios
if a.list is not None:
    print(f'\nSwitched at margin {a.list:g}:\n')
    for ratio, path, r, rel in listed:
        print(f'- {path.split("/")[-1]} {r["file"].split("/")[-1]} at {r["threads"]} thread(s): oneDNN alone '
              f'{rel:.4f}x the fastest finalist in the check; checked / onednn_auto in compare {ratio:.3f}')
