#!/usr/bin/env python3
"""calibrate's default method against always retraining and always fitting the lines, over the
transfer benchmark's committed runs (docs/transfer.md, "The default method").

    python3 bench/default_rule.py [-o OUT.md]

For each test (a source model and a target dataset), what the source's data lacks of the target's
machine (ISA cap, cores, thread counts: what the learner's features know of a machine) decides
the default, as convsel_calibrate_default_method does: retrain where something is new; where
nothing is, linear in the sixteenth and seventeenth sessions, linear-or-both since the eighteenth
(the lines, with residual trees where cross-validation on the samples says they pay). The column
"new to the source's data" says which for each test; the regrets are read from the CSVs that
bench_transfer wrote, K = 10 and 20. The linear-or-both column comes from the eighteenth session's
reruns of the tests with nothing new (transfer_lob_*.csv: the same sources, targets and splits,
without --source-data; their linear and both rows equal the first runs'). The retrain-else-linear
rule was made on the first six tests; the seventh (the sixteenth session's Zen 5 VM, reporting L3
508 MiB) and the eighth (Zen 4's fifth file, from a source trained on the Xeon and Zen 5 only;
eighteenth session) came after it; linear-or-both was proposed after the seventh and first run on
all of them at once. The means are given over the first six, over the two later ones and over all
eight.
"""
import argparse, csv, os, sys

# (test, results CSV, what the source's data lacks of the target's machine (None: nothing),
#  the eighteenth session's rerun with the linear-or-both row (None: not needed, retrain there))
TESTS = [
    ('AVX2 cap on Zen 4, from Zen 4', 'transfer_clean.csv', 'the AVX2 cap', None),
    ('1 thread on Zen 4, from Zen 4 at 2 threads', 'transfer_t1_clean.csv', '1 thread', None),
    ('Xeon, from Zen 4', 'transfer_xeon_naive.csv', None, 'transfer_lob_xeon_from_zen4.csv'),
    ('Zen 5, from Zen 4', 'transfer_zen5.csv', None, 'transfer_lob_zen5_from_zen4.csv'),
    ('Zen 5, from Zen 4 + Xeon', 'transfer_zen5_from_zen4_xeon.csv', None, 'transfer_lob_zen5_from_zen4_xeon.csv'),
    ('Xeon, from Zen 4 + Zen 5', 'transfer_xeon_from_zen4_zen5.csv', None, 'transfer_lob_xeon_from_zen4_zen5.csv'),
    ('Zen 5 in another VM (L3 508 MiB), from the default', 'transfer_zen5_vm2.csv', None,
     'transfer_lob_zen5_vm2.csv'),
    ('Zen 4, from Xeon + Zen 5', 'transfer_zen4_from_xeon_zen5.csv', None, 'transfer_lob_zen4_from_xeon_zen5.csv'),
]
MADE_ON = 6  # retrain-else-linear was chosen looking at the first six tests
ROWS = {'source': 'source unchanged', 'retrain': 'calibrated retrain (source data + K)',
        'linear': 'calibrated linear', 'trees': 'calibrated trees', 'both': 'calibrated both',
        'linear-or-both': 'calibrated linear-or-both'}
KS = ('10', '20')
# What each rule fits where nothing is new (retrain where something is).
RULES = {'default (retrain, else linear-or-both)': 'linear-or-both', 'retrain-else-linear (sessions 16-17)': 'linear',
         'retrain-else-trees': 'trees', 'retrain-else-both': 'both'}

ap = argparse.ArgumentParser()
ap.add_argument('-o', dest='out')
ap.add_argument('--results', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results'))
a = ap.parse_args()


def read(path):
    regret = {}
    try:
        with open(os.path.join(a.results, path)) as f:
            for row in csv.DictReader(f):
                regret[(row['k'], row['model'])] = 100 * float(row['regret_mean'])
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f'default_rule: {path}: {e}')
    return regret


def cells_of(regret, path, m):
    try:
        return [regret[(k, ROWS[m])] for k in KS]
    except KeyError as e:
        sys.exit(f'default_rule: {path} has no row {e}')


lines = ['| test | new to the source\'s data | default | source | retrain K = 10 / 20 | linear K = 10 / 20 '
         '| trees K = 10 / 20 | both K = 10 / 20 | linear-or-both K = 10 / 20 | default K = 10 / 20 |',
         '|---|---|---|---|---|---|---|---|---|---|']
sums = {m: [] for m in ('source', 'retrain', 'linear', 'trees', 'both', *RULES)}
made_on = {m: [] for m in sums}
held_out = {m: [] for m in sums}
for i, (name, path, new, lob_path) in enumerate(TESTS):
    regret = read(path)
    cells = {m: cells_of(regret, path, m) for m in ('source', 'retrain', 'linear', 'trees', 'both')}
    if lob_path:
        rerun = read(lob_path)
        # The rerun must be the same test: its linear rows agree with the first run's, to the
        # digits printed; its both rows within 0.1 point (the Xeon-from-Zen-4 test, first run on
        # the Xeon in the thirteenth session, gives both 8.28 / 8.48 against 8.34 / 8.45 here, with
        # source, linear and trees identical: the residual trees fitted on another machine's
        # floating point).
        for m, tol in (('linear', 0.005), ('both', 0.1)):
            again = cells_of(rerun, lob_path, m)
            if any(abs(x - y) > tol for x, y in zip(again, cells[m])):
                sys.exit(f'default_rule: {lob_path}: {m} {again} differs from {path}: {cells[m]}')
        cells['linear-or-both'] = cells_of(rerun, lob_path, 'linear-or-both')
    elif not new:
        sys.exit(f'default_rule: {name}: nothing new, and no linear-or-both rerun')
    for rule, otherwise in RULES.items():
        cells[rule] = cells['retrain' if new else otherwise]
    for m in sums:
        sums[m] += cells[m]
        (made_on if i < MADE_ON else held_out)[m] += cells[m]
    pair = lambda m: ' / '.join(f'{v:.2f}%' for v in cells[m]) if m in cells else '-'
    default = 'retrain' if new else 'linear-or-both'
    lines.append(f'| {name} | {new or "nothing"} | {default} | {cells["source"][0]:.2f}% | {pair("retrain")} | '
                 f'{pair("linear")} | {pair("trees")} | {pair("both")} | {pair("linear-or-both")} | '
                 f'{pair("default (retrain, else linear-or-both)")} |')
mean = lambda d: ', '.join(f'{m} {sum(v) / len(v):.2f}' for m, v in d.items())
lines.append('')
lines.append(f'Mean regret over the first {MADE_ON} tests (retrain-else-linear was made on them), K = 10 and 20 '
             '(the rule the default has been chosen by since the ninth session): ' + mean(made_on) + '.')
lines.append('')
lines.append(f'Over the {len(TESTS) - MADE_ON} later tests: ' + mean(held_out) + '.')
lines.append('')
lines.append(f'Over all {len(TESTS)} tests: ' + mean(sums) + '.')
text = '\n'.join(lines) + '\n'
print(text, end='')
if a.out:
    with open(a.out, 'w') as f:
        f.write('# calibrate\'s default method on the transfer benchmark\n\n'
                'Generated by `python3 bench/default_rule.py -o ' + a.out + '` from the committed CSVs '
                '(each computed where docs/transfer.md says). Regret mean, %.\n\n' + text)
