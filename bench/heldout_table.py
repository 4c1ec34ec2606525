#!/usr/bin/env python3
"""The table of bench/learner_splits.sh and bench/learner_heldout.sh: one row per held-out
split from `convsel eval --json`, and the means.

    python3 bench/heldout_table.py ROWS TITLE [--roles]

ROWS: tab-separated lines NAME, SEED, JSON (learner_splits.sh), or NAME, ROLE, SEED, JSON with
--roles (learner_heldout.sh: "held" or "scored"). Without --roles one mean over every row; with
it a role column and a mean per dataset. TITLE is printed first, then the table.
"""
import argparse, json

ap = argparse.ArgumentParser()
ap.add_argument('rows')
ap.add_argument('title')
ap.add_argument('--roles', action='store_true')
a = ap.parse_args()

keys = ('mape', 'spearman', 'top1', 'regret_mean', 'regret_p95')
rows = []  # (name, role or None, seed, metrics)
for line in open(a.rows):
    fields = line.rstrip('\n').split('\t', 3 if a.roles else 2)
    name, role, seed, js = fields if a.roles else (fields[0], None, fields[1], fields[2])
    m = json.loads(js)
    m = m.get('metrics', m)
    rows.append((name, role, seed, [m[k] for k in keys]))


def cells(v):
    return f'{100 * v[0]:.1f}% | {v[1]:.3f} | {v[2]:.3f} | {100 * v[3]:.2f}% | {100 * v[4]:.1f}%'


def mean(rs):
    return [sum(r[3][i] for r in rs) / len(rs) for i in range(len(keys))]


role_head, role_rule = ('role | ', '---|') if a.roles else ('', '')
print(a.title + '\n')
print(f'| dataset | {role_head}split seed | MAPE | Spearman per config | top-1 | regret mean | regret p95 |')
print(f'|---|{role_rule}---|---|---|---|---|---|')
for name, role, seed, v in rows:
    print(f'| {name} | {role + " | " if a.roles else ""}{seed} | {cells(v)} |')
if a.roles:
    for name in dict.fromkeys(r[0] for r in rows):
        vs = [r for r in rows if r[0] == name]
        print(f'| **{name}, mean of {len(vs)}** | {vs[0][1]} | | {cells(mean(vs))} |')
else:
    print(f'| **mean of {len(rows)}** | | {cells(mean(rows))} |')
