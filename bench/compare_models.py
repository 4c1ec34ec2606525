#!/usr/bin/env python3
"""Renders bench/compare_models.sh's JSONL as a Markdown table: python3 bench/compare_models.py JSONL MD."""
import json, math, sys, time
rows = [json.loads(l) for l in open(sys.argv[1])]
models = list(dict.fromkeys(r["m"] for r in rows))
keys = list(dict.fromkeys((r["net"], r["t"]) for r in rows))
by = {(r["net"], r["t"], r["m"]): r["r"] for r in rows}
def gap(r): return r["plan_ms"] / r["oracle_ms"] - 1
def spd(r): return r["onednn_auto_ms"] / r["plan_ms"]
def short(n): return n.replace("../shared/networks/", "shared/").replace("networks/", "").replace(".txt", "")
with open(sys.argv[2], "w") as f:
    f.write("# Models compared end to end\n\n")
    f.write("Rendered by `bench/compare_models.py` from `%s` (written by `bash bench/compare_models.sh`) on %s. Each cell is one `convsel compare --json` "
            "run (plan only): gap = plan / oracle - 1, speed-up = onednn_auto / plan, both timed in that "
            "run; the models ran one after the other for each row.\n\n" % (sys.argv[1], time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())))
    f.write("Models: " + ", ".join("`%s` (id %s)" % (m, next(r["r"]["model_id"] for r in rows if r["m"] == m)) for m in models) + "\n\n")
    f.write("| network | threads | " + " | ".join("%s gap | %s speed-up" % (m, m) for m in models) + " |\n")
    f.write("|---|---|" + "---|---|" * len(models) + "\n")
    for net, t in keys:
        cells = []
        for m in models:
            r = by.get((net, t, m))
            cells += ["%+.1f%%" % (100 * gap(r)), "%.3fx" % spd(r)] if r else ["-", "-"]
        f.write("| %s | %d | %s |\n" % (short(net), t, " | ".join(cells)))
    f.write("\n| model | runs | within 3% of the oracle | > 3% slower than oneDNN alone | mean gap | geometric mean speed-up |\n|---|---|---|---|---|---|\n")
    for m in models:
        rs = [by[(n, t, m)] for n, t in keys if (n, t, m) in by]
        g = [gap(r) for r in rs]; s = [spd(r) for r in rs]
        f.write("| %s | %d | %d | %d | %+.1f%% | %.3fx |\n" % (m, len(rs), sum(x <= 0.03 for x in g),
                sum(x < 1 / 1.03 for x in s), 100 * sum(g) / len(g), math.exp(sum(map(math.log, s)) / len(s))))
print("wrote", sys.argv[2])
