/*
 * What sharing one workspace among a network's layers saves: each plan is
 * instantiated three times in one process: A with the runner's shared
 * workspace (the default), B with a workspace per layer (how the runner worked
 * until session 29), and C, below; they are run interleaved (convsel_time_interleaved,
 * A B C A B C ...), so that the machine's slow spells fall on all three. C is a
 * second shared instance, the control: C / A shows what the order and the
 * noise alone make of two identical runners.
 *
 *   runner_workspace [--max-time S] [--seed N] PLAN...
 *
 * PLAN: a plan file from `convsel select -o` (or `compare --plans`). Prints one
 * JSON line per plan: {"plan", "layers", "threads", "shared_ms", "private_ms"
 * (medians), "shared_min_ms", "private_min_ms", "private_over_shared",
 * "control_over_shared", "shared_bytes", "private_bytes" (workspace memory
 * the layers hold)}.
 * bench/runner_workspace.sh makes the plans and the table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convsel.h"

static convsel_status run_once(void *ctx)
{
    return convsel_runner_run(ctx);
}

static int bench_plan(const char *path, double max_time, uint64_t seed)
{
    convsel_plan *plan = NULL;
    convsel_runner *r[3] = {NULL, NULL, NULL};
    size_t bytes[3] = {0, 0, 0};
    convsel_status st = convsel_plan_load(path, &plan);
    for (int k = 0; k < 3 && st == CONVSEL_OK; k++) {
        st = convsel_runner_create(plan, seed, &r[k]);
        if (st == CONVSEL_OK)
            st = convsel_runner_share_workspace(r[k], k != 1, &bytes[k]);
    }
    convsel_timing t[3];
    if (st == CONVSEL_OK) {
        convsel_timing_options opts;
        convsel_timing_options_default(&opts);
        opts.max_time_s = max_time;
        opts.warmup_s = 0.5;
        opts.min_rounds = 10;
        opts.max_rounds = 100000;
        opts.target_rel_ci = 0.0; /* the whole time budget */
        const convsel_timed_fn fns[3] = {run_once, run_once, run_once};
        void *const ctxs[3] = {r[0], r[1], r[2]};
        st = convsel_time_interleaved(3, fns, ctxs, &opts, t);
    }
    if (st == CONVSEL_OK) {
        printf("{\"plan\": \"%s\", \"layers\": %zu, \"threads\": %d, \"shared_ms\": %.4f, \"private_ms\": %.4f, "
               "\"shared_min_ms\": %.4f, \"private_min_ms\": %.4f, \"runs\": %d, \"private_over_shared\": %.4f, "
               "\"control_over_shared\": %.4f, \"shared_bytes\": %zu, \"private_bytes\": %zu}\n",
               path, plan->n_layers, plan->threads, t[0].median_ms, t[1].median_ms,
               t[0].min_ms, t[1].min_ms, t[0].runs, t[1].median_ms / t[0].median_ms, t[2].median_ms / t[0].median_ms,
               bytes[0], bytes[1]);
        fflush(stdout);
    } else {
        fprintf(stderr, "runner_workspace: %s: %s: %s\n", path, convsel_status_str(st), convsel_last_error());
    }
    for (int k = 0; k < 3; k++)
        convsel_runner_destroy(r[k]);
    convsel_plan_destroy(plan);
    return st == CONVSEL_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    double max_time = 6.0;
    uint64_t seed = 1;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
        if (i + 1 >= argc) {
            fprintf(stderr, "runner_workspace: %s needs a value\n", argv[i]);
            return 2;
        }
        char *end;
        if (strcmp(argv[i], "--max-time") == 0) {
            max_time = strtod(argv[i + 1], &end);
            if (*end || !(max_time > 0)) {
                fprintf(stderr, "runner_workspace: --max-time takes seconds > 0\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--seed") == 0) {
            seed = strtoull(argv[i + 1], &end, 10);
            if (*end) {
                fprintf(stderr, "runner_workspace: --seed takes a whole number\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: runner_workspace [--max-time S] [--seed N] PLAN...\n");
            return 2;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "usage: runner_workspace [--max-time S] [--seed N] PLAN...\n");
        return 2;
    }
    int failed = 0;
    for (; i < argc; i++)
        failed |= bench_plan(argv[i], max_time, seed);
    return failed;
}
