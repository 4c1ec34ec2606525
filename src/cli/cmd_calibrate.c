/* convsel calibrate: fit a model trained elsewhere to this CPU from a few measurements. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h> /* access */

#include "calibrate_pool.h"
#include "cli.h"

#define CMD "calibrate"
#define MAX_POOL_PATHS 16
#define MAX_THREAD_COUNTS 8

static void usage(FILE *out)
{
    fprintf(out,
            "usage: convsel [--isa avx512|avx2|sse41|scalar] calibrate [--model M] --samples K\n"
            "                 [--threads LIST] [--seed S] [--method METHOD] [--pool FILE|DIR ...]\n"
            "                 [--sampled N] [--max-flops F] [--max-time-s S] [--reorder-time-s S]\n"
            "                 [--cold-time-s S] [--network-time-s S] [--total-time-s S]\n"
            "                 [--data SAMPLES.msgpack]\n"
            "                 [--source-data FILE ...] [--if-needed] [--json] [--quiet] -o OUT\n"
            "       convsel calibrate [--model M] --from-data FILE [--samples K] [--seed S] [--method M]\n"
            "                 [--source-data FILE ...] [--json] -o OUT\n"
            "\n"
            "Fits a model trained on another CPU to this one (docs/transfer.md): chooses K\n"
            "configurations (layer shape x thread count) where the model's ranking is least sure and\n"
            "that cover the candidates, times every applicable primitive on each, interleaved, and\n"
            "calibrates the model's predictions to them; then times reorders inside the pool's\n"
            "networks (and each shrunk by 8 per side) and fits the model's reorder prices to them\n"
            "(a factor, a fixed cost, a line per layout pair where each predicts them better).\n"
            "OUT is an ordinary model file.\n"
            "\n"
            "  --model M          the model to calibrate (default: the default model)\n"
            "  --samples K        configurations to profile (with --from-data: to take from FILE;\n"
            "                     default there: all of them)\n"
            "  --threads LIST     thread counts of the candidates, e.g. 1,2 (default 1,2)\n"
            "  --seed S           seed of the choice and of the residual trees (default 1)\n"
            "  --method M         auto, pooled, linear, trees, both, linear-or-both or retrain.\n"
            "                     Default, when the model's datasets are at hand: retrain if this\n"
            "                     CPU's ISA cap, core count or a thread count is new to them (the\n"
            "                     trees can learn it), else linear-or-both (they cannot tell it\n"
            "                     apart); without them, linear-or-both. auto: pooled, linear or both, by\n"
            "                     cross-validated regret on the samples; linear-or-both: the same\n"
            "                     between linear and both. retrain: a new model trained on the\n"
            "                     model's own datasets plus the samples\n"
            "  --source-data FILE a dataset the model was trained on (repeatable; for retrain; default:\n"
            "                     those MODEL.datasets beside the model lists, one path per line)\n"
            "  --retrain-copies R how many times retraining gives each sample (default 5)\n"
            "  --pool P           network file or directory of *.txt whose layers are candidates\n"
            "                     (repeatable; default: ./networks, else networks/ next to the\n"
            "                     executable's directory)\n"
            "  --sampled N        add N sampled configurations around those layers (default 200)\n"
            "  --max-flops F      leave out candidates above F FLOPs, to keep profiling short\n"
            "                     (default 5e8)\n"
            "  --max-time-s S     timing cap per configuration (default 0.3)\n"
            "  --reorder-time-s S about how long to time reorders inside the pool's networks, network\n"
            "                     by network at every thread count (the first network always; default\n"
            "                     4; 0: not at all, the model's reorder prices stay as trained)\n"
            "  --cold-time-s S    about how long to time cold reads (the reorders that read a network's\n"
            "                     input, or an unconnected layer's, from memory) inside the pool's\n"
            "                     networks, network by network at every thread count (the first\n"
            "                     network always; default 2; 0: not at all, plans price no cold reads)\n"
            "  --network-time-s S about how long to time each primitive's convolutions inside the pool's\n"
            "                     networks against alone (twice, each primitive keeping its faster pass),\n"
            "                     network by network at every thread count (the first network always),\n"
            "                     and price the layers' weights, read from memory there, per MB and\n"
            "                     primitive in selection (default 6; 0: not at all)\n"
            "  --total-time-s S   bound the command to about S seconds (default 50; 0: no bound):\n"
            "                     profiling (about 0.3 s a sample) stops before a sample, past the\n"
            "                     first 5, that the samples' mean time projects past 4S/5 less the\n"
            "                     three probes' times, keeping those profiled (the first ones chosen\n"
            "                     spread over the pool); retraining stops adding trees once it has\n"
            "                     taken what S leaves after the profiling and the probes' times (at\n"
            "                     least S/5; cut before a quarter of its trees, linear-or-both is\n"
            "                     fitted instead); and the probes leave out any network but the first\n"
            "                     that, by the time the networks before it took per FLOP, would run\n"
            "                     the command past S (what is left shared by the probes in proportion\n"
            "                     to their times)\n"
            "  --data FILE        also save the measured samples as a dataset\n"
            "  --from-data FILE   calibrate from a dataset profiled on the target CPU; nothing is\n"
            "                     measured\n"
            "  --json             print {\"samples\", \"samples_asked\" (K; 0 with --from-data and no\n"
            "                     --samples), \"samples_cut\" (by --total-time-s), \"method\",\n"
            "                     \"chosen_by_auto\",\n"
            "                     \"method_by_default\", \"method_asked\", \"cv_rmse_log\", \"cv_regret_log\",\n"
            "                     \"seconds\", \"profile_seconds\", \"fit_seconds\", \"source_model\",\n"
            "                     \"model\", ..., \"networks_left_out\" (by --total-time-s, over the\n"
            "                     three probes), \"fit_time_limit_s\", \"fit_cut\", \"fit_fewest_trees\",\n"
            "                     \"fit_fallback\" (retraining's share of --total-time-s, 0 when\n"
            "                     unbounded; how many ensembles it cut (one per bag, and per primitive\n"
            "                     in per-primitive mode), the fewest trees one kept, and\n"
            "                     whether that was so few that linear-or-both was fitted instead),\n"
            "                     \"busy_others_cpus\", \"busy_steal_cpus\" (per measurement: profile,\n"
            "                     reorders, cold, convolutions, what other processes used and the\n"
            "                     hypervisor stole meanwhile, in CPUs; over 0.25 together, a warning\n"
            "                     on stderr says that measurement may be off)}\n"
            "  --quiet            no progress on stderr (and no such warning)\n"
            "  --if-needed        when the model already describes this CPU (same CPU, ISA cap and\n"
            "                     instruction set of OpenBLAS's kernels) at every --threads count\n"
            "                     (its calibration's, else its datasets' where listed beside it),\n"
            "                     copy it to OUT and measure nothing\n"
            "  -o OUT             the calibrated model file\n"
            "\n"
            "--isa (a global option, before or after the command) emulates a CPU with a smaller\n"
            "instruction set: oneDNN, OpenBLAS and convsel's own kernels are capped alike.\n");
}

/* Loads each of the n datasets at paths into sets[] that is not loaded yet;
 * CLI_FAIL, the file named, at the first that cannot be read. */
static int load_sources(const char *const *paths, size_t n, convsel_dataset **sets)
{
    for (size_t f = 0; f < n; f++) {
        convsel_status st;
        if (!sets[f] && (st = convsel_dataset_load(paths[f], &sets[f])) != CONVSEL_OK) {
            fprintf(stderr, "convsel %s: %s: %s (%s)\n", CMD, paths[f], convsel_status_str(st), convsel_last_error());
            return CLI_FAIL;
        }
    }
    return CLI_OK;
}

/* The thread counts (convsel_threads_bit) at which ds holds records of the
 * setup here. */
static uint64_t dataset_threads(const convsel_dataset *ds, const convsel_fingerprint *here)
{
    uint64_t mask = 0;
    size_t nf = convsel_dataset_fingerprint_count(ds);
    unsigned char *same = calloc(nf ? nf : 1, 1);
    if (!same)
        return 0;
    for (size_t f = 0; f < nf; f++)
        same[f] = (unsigned char)convsel_fingerprint_same_setup(convsel_dataset_fingerprint(ds, f), here);
    for (size_t i = 0; i < convsel_dataset_size(ds); i++) {
        const convsel_record *r = convsel_dataset_record(ds, i);
        if (r->fingerprint < nf && same[r->fingerprint])
            mask |= convsel_threads_bit(r->threads);
    }
    free(same);
    return mask;
}

/* ---------------------------------------------------------------- output */

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* ---------------------------------------------------------------- the model's datasets */

/*
 * The datasets a model was trained on, as its sidecar lists them: MODEL.datasets
 * beside MODEL.msgpack, one path per line (relative to the sidecar's folder;
 * blank lines and '#' comments skipped). Returns 0 without a sidecar, 1 with
 * every listed file readable (paths[0..*n)), -1 otherwise (*why says what).
 */
static char sidecar_paths[MAX_POOL_PATHS][4096];

static int model_datasets(const char *model_path, size_t *n, char *why, size_t why_size)
{
    char side[4096];
    size_t len = strlen(model_path);
    const char *ext = ".msgpack";
    size_t stem = len >= strlen(ext) && strcmp(model_path + len - strlen(ext), ext) == 0 ? len - strlen(ext) : len;
    if (snprintf(side, sizeof side, "%.*s.datasets", (int)stem, model_path) >= (int)sizeof side)
        return 0;
    FILE *f = fopen(side, "r");
    if (!f)
        return 0;
    const char *slash = strrchr(side, '/');
    int dir_len = slash ? (int)(slash - side + 1) : 0;
    char line[4096];
    int ok = 1;
    *n = 0;
    while (ok && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        const char *name = line + strspn(line, " \t");
        if (!*name || *name == '#')
            continue;
        if (*n == MAX_POOL_PATHS) {
            snprintf(why, why_size, "%s lists more than %d datasets", side, MAX_POOL_PATHS);
            ok = 0;
        } else if (snprintf(sidecar_paths[*n], sizeof sidecar_paths[0], "%.*s%s", *name == '/' ? 0 : dir_len, side,
                            name) >= (int)sizeof sidecar_paths[0] ||
                   access(sidecar_paths[*n], R_OK) != 0) {
            snprintf(why, why_size, "%s lists %s, which cannot be read", side, name);
            ok = 0;
        } else {
            (*n)++;
        }
    }
    fclose(f);
    if (ok && *n == 0) {
        snprintf(why, why_size, "%s lists no datasets", side);
        ok = 0;
    }
    return ok ? 1 : -1;
}

/* ---------------------------------------------------------------- the command */

/* A repeatable path option (--pool, --source-data): its value appended to
 * list, at most MAX_POOL_PATHS. 0 on a usage error, said on stderr. */
static int path_push(int argc, char **argv, int *i, const char **list, size_t *n)
{
    const char *opt = argv[*i], *v = cli_value(CMD, argc, argv, i);
    if (!v)
        return 0;
    if (*n == MAX_POOL_PATHS) {
        fprintf(stderr, "convsel %s: at most %d %s paths\n", CMD, MAX_POOL_PATHS, opt);
        return 0;
    }
    list[(*n)++] = v;
    return 1;
}

/* " at 1 thread", " at 2 threads", ..., " at 4+ threads": thread slot t. */
static void text_slot(int t)
{
    printf(" at %d%s thread%s", t + 1, t + 1 == CONVSEL_REORDER_MODEL_THREADS ? "+" : "", t ? "s" : "");
}

/* The measurements calibrate makes, for what else ran meanwhile. */
enum { BUSY_PROFILE, BUSY_REORDERS, BUSY_COLD, BUSY_CONVOLUTIONS, BUSY_PHASES };
static const char *const busy_phase_names[BUSY_PHASES] = {"profile", "reorders", "cold", "convolutions"};
static const char *const busy_phase_text[BUSY_PHASES] = {"the samples were profiled", "the reorders were timed",
                                                         "the cold reads were timed",
                                                         "the convolutions were timed inside networks"};
/* Other processes and the hypervisor together past this many CPUs on
 * average during a measurement: calibrate says so. On a quiet 2-vCPU VM
 * they used at most 0.023; one process spinning beside it throughout
 * 0.83-0.88, for 8 s of a 24 s probe 0.33
 * (bench/results/calibrate_busy_zen5vm2_session56.txt). */
#define BUSY_WARN_CPUS 0.25

static void busy_since(const convsel_busy_mark *mark, int phase, double *others, double *steal)
{
    convsel_busy_mark now;
    convsel_busy_mark_now(&now);
    convsel_busy_between(mark, &now, &others[phase], &steal[phase]);
}

/* One line on stderr per measurement that ran beside other work. */
static void warn_busy(const double *others, const double *steal, int quiet)
{
    for (int k = 0; k < BUSY_PHASES && !quiet; k++)
        if (others[k] >= 0 && others[k] + steal[k] > BUSY_WARN_CPUS)
            fprintf(stderr,
                    "convsel %s: warning: while %s, other processes used %.2f CPUs on average and the hypervisor "
                    "stole %.2f: what was measured then may be off; calibrate again when the machine is quiet\n",
                    CMD, busy_phase_text[k], others[k], steal[k]);
}

static void text_busy(const double *others, const double *steal)
{
    double most = -1.0, most_steal = 0.0;
    for (int k = 0; k < BUSY_PHASES; k++)
        if (others[k] >= 0 && others[k] + steal[k] > most) {
            most = others[k] + steal[k];
            most_steal = steal[k];
        }
    if (most >= 0)
        printf("  beside the measurements: other processes and the hypervisor's steal used at most %.2f CPUs on "
               "average (steal %.2f)\n",
               most, most_steal);
}

/* Per phase that ran, {"profile": x, ...}. */
static void json_phases(const double *v)
{
    putchar('{');
    for (int k = 0, first = 1; k < BUSY_PHASES; k++) {
        if (v[k] < 0)
            continue;
        printf("%s\"%s\": %.3f", first ? "" : ", ", busy_phase_names[k], v[k]);
        first = 0;
    }
    putchar('}');
}

/* A value per measured thread slot (v[t] > 0) as a JSON object keyed "1",
 * "2", "3", "4+"; with lo, each value is [lo, v]. */
static void json_slots(const double *v, const double *lo)
{
    putchar('{');
    for (int t = 0, first = 1; t < CONVSEL_REORDER_MODEL_THREADS; t++) {
        if (!(v[t] > 0))
            continue;
        printf("%s\"%d%s\": ", first ? "" : ", ", t + 1, t + 1 == CONVSEL_REORDER_MODEL_THREADS ? "+" : "");
        if (lo)
            printf("[%.4f, %.4f]", lo[t], v[t]);
        else
            printf("%.4f", v[t]);
        first = 0;
    }
    putchar('}');
}

/* ---------------------------------------------------------------- probes in networks */

/* Each (network, thread count) is timed for about this long after warming up. */
#define REORDER_PROBE_S 0.3
#define COLD_PROBE_S 0.4
#define NETWORK_PROBE_S 1.0 /* shared by the primitives */

/* What a probe appends to, and with what. */
struct probe {
    const char *what; /* "reorders", "cold reads", "convolutions" */
    const unsigned char *selected;
    uint64_t seed;
    convsel_reorder_sample **reorders; /* one of the three */
    convsel_cold_sample **cold;
    convsel_conv_sample **convs;
    size_t *n;
    size_t *left_out; /* networks left out by the time bound, added to */
};

static convsel_status probe_one(const struct probe *p, const convsel_network *network, int threads)
{
    if (p->reorders)
        return convsel_reorder_probe(network, threads, p->selected, REORDER_PROBE_S, p->seed, p->reorders, p->n);
    if (p->cold)
        return convsel_cold_probe(network, threads, p->selected, COLD_PROBE_S, p->seed, p->cold, p->n);
    return convsel_conv_probe(network, threads, p->selected, NETWORK_PROBE_S, p->seed, p->convs, p->n);
}

/* The FLOPs of a network's layers: what a probe's time on the networks
 * before projects its time on the next by. */
static double network_flops(const convsel_network *network)
{
    double flops = 0;
    for (size_t i = 0; i < convsel_network_size(network); i++)
        flops += convsel_problem_flops(convsel_network_layer(network, i));
    return flops;
}

/*
 * A probe of the pool's networks (convsel_reorder_probe, convsel_cold_probe,
 * convsel_conv_probe) at every thread count, network by network in the pool's
 * order until budget_s is spent (the first network always). When cap_s > 0, a
 * later network is left out if the probe's seconds per FLOP so far project it
 * to end past cap_s: a slow CPU or ISA cap (ResNet-50 took 31 s of a 6 s
 * budget under SSE4.1) keeps calibrate within its time. A network that cannot
 * be run end to end with the selected primitives is passed over with a note.
 */
static int probe_pool(const cli_pool *c, const int *threads, size_t n_threads, double budget_s, double cap_s,
                      int quiet, const struct probe *p)
{
    const double t0 = cli_now();
    size_t networks = 0;
    double probed_flops = 0;
    for (size_t f = 0; f < c->n_networks && (f == 0 || cli_now() - t0 < budget_s); f++) {
        const double spent = cli_now() - t0, flops = network_flops(c->networks[f]);
        const double projected = probed_flops > 0 ? spent + spent / probed_flops * flops : 0;
        if (f > 0 && cap_s > 0 && projected > cap_s) {
            if (!quiet)
                fprintf(stderr, "convsel %s: note: %s left out of the %s probe: projected to end at %.1f s of "
                        "its %.1f s (--total-time-s)\n", CMD, convsel_network_name(c->networks[f]), p->what,
                        projected, cap_s);
            (*p->left_out)++;
            continue;
        }
        probed_flops += flops;
        size_t before = *p->n;
        convsel_status st = CONVSEL_OK;
        for (size_t t = 0; t < n_threads && st == CONVSEL_OK; t++)
            st = probe_one(p, c->networks[f], threads[t]);
        if (st == CONVSEL_OUT_OF_MEMORY)
            return cli_fail(CMD, st);
        if (st != CONVSEL_OK) {
            *p->n = before; /* all of a network's thread counts or none */
            if (!quiet)
                fprintf(stderr, "convsel %s: note: no %s timed in %s: %s\n", CMD, p->what,
                        convsel_network_name(c->networks[f]), convsel_last_error());
            continue;
        }
        networks++;
    }
    if (!quiet)
        fprintf(stderr, "convsel %s: %zu %s timed inside %zu network%s in %.1f s\n", CMD, *p->n, p->what, networks,
                networks == 1 ? "" : "s", cli_now() - t0);
    return CLI_OK;
}

/* A probe's cap under --total-time-s: what is left of total_s since t_start,
 * in proportion of its budget to the budgets of the probes still to run (this
 * one's included); 0 when there is no bound. The cap may be spent already:
 * then the probe times its first network alone. */
static double probe_cap(double t_start, double total_s, double budget_s, double budgets_left_s)
{
    if (!(total_s > 0) || !(budgets_left_s > 0))
        return 0;
    double cap = (total_s - (cli_now() - t_start)) * budget_s / budgets_left_s;
    return cap > 1e-3 ? cap : 1e-3;
}

int cmd_calibrate(int argc, char **argv)
{
    const char *model_path = NULL, *out_path = NULL, *data_path = NULL, *from_data = NULL;
    const char *pool_paths[MAX_POOL_PATHS], *source_paths[MAX_POOL_PATHS];
    size_t n_pool_paths = 0, n_source_paths = 0;
    long samples = 0, sampled = 200;
    int threads[MAX_THREAD_COUNTS] = {1, 2};
    size_t n_threads = 2;
    uint64_t seed = 1;
    double max_flops = 5e8, max_time_s = 0.3, reorder_time_s = 4.0, cold_time_s = 2.0, network_time_s = 6.0;
    double total_time_s = 50.0;
    size_t left_out = 0; /* pool networks the probes left out under total_time_s */
    int samples_cut = 0; /* total_time_s stopped profiling before the K samples */
    int json = 0, quiet = 0, if_needed = 0, method_given = 0;
    convsel_calibrate_params params;
    convsel_calibrate_params_default(&params);
    /* Profiling leaves OpenMP at the last thread count timed; retraining
     * takes every thread OpenMP offers before that. */
    params.threads = omp_get_max_threads();

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        long l;
        if (cli_is_help(a)) {
            usage(stdout);
            return CLI_OK;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--if-needed") == 0) {
            if_needed = 1;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(a, "--model") == 0) {
            if (!(model_path = cli_value(CMD, argc, argv, &i)))
                return CLI_USAGE;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (!(out_path = cli_value(CMD, argc, argv, &i)))
                return CLI_USAGE;
        } else if (strcmp(a, "--data") == 0) {
            if (!(data_path = cli_value(CMD, argc, argv, &i)))
                return CLI_USAGE;
        } else if (strcmp(a, "--from-data") == 0) {
            if (!(from_data = cli_value(CMD, argc, argv, &i)))
                return CLI_USAGE;
        } else if (strcmp(a, "--pool") == 0) {
            if (!path_push(argc, argv, &i, pool_paths, &n_pool_paths))
                return CLI_USAGE;
        } else if (strcmp(a, "--source-data") == 0) {
            if (!path_push(argc, argv, &i, source_paths, &n_source_paths))
                return CLI_USAGE;
        } else if (strcmp(a, "--retrain-copies") == 0) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_long(CMD, a, v, 1, 1000, &l))
                return CLI_USAGE;
            params.retrain_copies = (int)l;
        } else if (strcmp(a, "--samples") == 0) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_long(CMD, a, v, 1, 100000, &samples))
                return CLI_USAGE;
        } else if (strcmp(a, "--sampled") == 0) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_long(CMD, a, v, 0, 1000000, &sampled))
                return CLI_USAGE;
        } else if (strcmp(a, "--seed") == 0) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_long(CMD, a, v, 0, 0x7fffffffL, &l))
                return CLI_USAGE;
            seed = (uint64_t)l;
        } else if (strcmp(a, "--method") == 0) {
            if (!(v = cli_value(CMD, argc, argv, &i)))
                return CLI_USAGE;
            method_given = 1;
            if (convsel_calibrate_method_parse(v, &params.method) != CONVSEL_OK) {
                fprintf(stderr, "convsel %s: --method needs linear, trees, both, pooled, auto, linear-or-both or retrain "
                                "(got '%s')\n",
                        CMD, v);
                return CLI_USAGE;
            }
        } else if (strcmp(a, "--threads") == 0) {
            if (!(v = cli_value(CMD, argc, argv, &i)))
                return CLI_USAGE;
            char *copy = strdup(v), *save = NULL;
            n_threads = 0;
            int ok = copy != NULL;
            for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && ok; tok = strtok_r(NULL, ",", &save)) {
                ok = n_threads < MAX_THREAD_COUNTS && cli_parse_long(CMD, a, tok, 1, 1024, &l);
                if (ok)
                    threads[n_threads++] = (int)l;
            }
            free(copy);
            if (!ok || n_threads == 0) {
                fprintf(stderr, "convsel %s: --threads needs 1 to %d comma-separated counts\n", CMD,
                        MAX_THREAD_COUNTS);
                return CLI_USAGE;
            }
        } else if (strcmp(a, "--max-flops") == 0) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_double(CMD, a, v, 1, 1e15, &max_flops))
                return CLI_USAGE;
        } else if (strcmp(a, "--reorder-time-s") == 0) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_double(CMD, a, v, 0, 3600, &reorder_time_s))
                return CLI_USAGE;
        } else if (strcmp(a, "--network-time-s") == 0) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_double(CMD, a, v, 0, 3600, &network_time_s))
                return CLI_USAGE;
        } else if (strcmp(a, "--total-time-s") == 0) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_double(CMD, a, v, 0, 86400, &total_time_s))
                return CLI_USAGE;
        } else if (strcmp(a, "--cold-time-s") == 0) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_double(CMD, a, v, 0, 3600, &cold_time_s))
                return CLI_USAGE;
        } else if (strcmp(a, "--max-time-s") == 0) {
            if (!(v = cli_value(CMD, argc, argv, &i)) || !cli_parse_double(CMD, a, v, 0.001, 3600, &max_time_s))
                return CLI_USAGE;
        } else {
            fprintf(stderr, "convsel %s: unknown option '%s'\n", CMD, a);
            usage(stderr);
            return CLI_USAGE;
        }
    }
    if (!out_path) {
        fprintf(stderr, "convsel %s: -o OUT is required\n", CMD);
        return CLI_USAGE;
    }
    if (cli_check_output(CMD, "-o", out_path) != CLI_OK ||
        (data_path && cli_check_output(CMD, "--data", data_path) != CLI_OK))
        return CLI_USAGE;
    if (!from_data && samples == 0) {
        fprintf(stderr, "convsel %s: --samples K is required (or --from-data FILE)\n", CMD);
        return CLI_USAGE;
    }
    if (from_data && (data_path || n_pool_paths)) {
        fprintf(stderr, "convsel %s: --from-data measures nothing: --data and --pool do not apply\n", CMD);
        return CLI_USAGE;
    }
    /* The model file, and the datasets it was trained on when its sidecar
     * lists them: with them at hand the default is retrain or linear-or-both, decided
     * once the samples are measured (convsel_calibrate_default_method);
     * without them, linear-or-both. */
    char default_path[4096];
    if (!model_path) {
        convsel_status dst = convsel_model_default_path(default_path, sizeof default_path);
        if (dst != CONVSEL_OK)
            return cli_fail(CMD, dst);
        model_path = default_path;
    }
    if (!n_source_paths && (!method_given || params.method == CONVSEL_CALIBRATE_RETRAIN)) {
        char why[4400];
        size_t n = 0;
        int listed = model_datasets(model_path, &n, why, sizeof why);
        if (listed == 1) {
            for (size_t f = 0; f < n; f++)
                source_paths[n_source_paths++] = sidecar_paths[f];
        } else if (listed < 0 && !method_given) {
            fprintf(stderr, "convsel %s: note: %s; calibrating with linear-or-both instead of retraining\n", CMD, why);
        } else if (listed < 0) {
            fprintf(stderr, "convsel %s: %s\n", CMD, why);
            return CLI_FAIL;
        }
    }
    if (n_source_paths && !method_given)
        params.method = CONVSEL_CALIBRATE_RETRAIN;
    if ((params.method == CONVSEL_CALIBRATE_RETRAIN) != (n_source_paths > 0)) {
        fprintf(stderr, "convsel %s: %s\n", CMD,
                n_source_paths ? "--source-data is for --method retrain only"
                               : "--method retrain needs the datasets the model was trained on (--source-data FILE "
                                 "..., or a MODEL.datasets file beside the model listing them)");
        return CLI_USAGE;
    }
    params.seed = seed;

    const double t_start = cli_now();
    /* The in-network probes' budgets, which --total-time-s keeps for them. */
    const double probes_s = reorder_time_s + cold_time_s + network_time_s;
    convsel_model *source = NULL, *calibrated = NULL;
    convsel_dataset *loaded = NULL, *target = NULL;
    convsel_dataset *source_data[MAX_POOL_PATHS] = {0};
    cli_pool cands = {0};
    size_t *chosen = NULL, *record_candidate = NULL;
    unsigned char *selected = NULL; /* the primitives measured: those the model knows */
    convsel_reorder_sample *reorder_samples = NULL;
    size_t n_reorder_samples = 0, n_cold_samples = 0, n_conv_samples = 0;
    convsel_cold_sample *cold_samples = NULL;
    convsel_conv_sample *conv_samples = NULL;
    double profile_s = 0.0, fit_s = 0.0, reorder_s = 0.0, cold_s = 0.0, network_s = 0.0;
    /* What other processes used (and the hypervisor stole) while each
     * measurement ran, in CPUs (BUSY_PHASES; -1: not run or unknown). */
    double others[BUSY_PHASES], steal[BUSY_PHASES];
    convsel_busy_mark mark;
    for (int k = 0; k < BUSY_PHASES; k++)
        others[k] = steal[k] = -1.0;
    convsel_status st;
    int rc = cli_open_model(CMD, model_path, &source);
    if (rc != CLI_OK)
        goto done;
    if (if_needed && !from_data) {
        /* Already a model of this CPU (and ISA cap): nothing to learn here. */
        convsel_fingerprint here;
        int same = 0, known = convsel_fingerprint_get(&here) == CONVSEL_OK;
        const convsel_fingerprint *other_blas = NULL;
        if (known)
            same = cli_model_describes(source, &here, &other_blas);
        if (known && !same && !quiet && !json) {
            char text[512];
            if (other_blas) {
                printf("the model measured this CPU with OpenBLAS's %s kernels, this process runs its %s ones "
                       "(OPENBLAS_CORETYPE): calibrating\n",
                       cli_blas_isa_name(other_blas), cli_blas_isa_name(&here));
            } else {
                cli_foreign_cpu_text(source, &here, text, sizeof text);
                printf("%s: calibrating\n", text);
            }
            fflush(stdout); /* before the progress on stderr */
        }
        uint64_t measured = same ? cli_calibrated_threads(source, &here) : 0, asked = 0;
        const char *by = "calibration";
        for (size_t t = 0; t < n_threads; t++)
            asked |= convsel_threads_bit(threads[t]);
        if (same && !measured && n_source_paths) {
            /* Trained here, not calibrated: the thread counts its datasets
             * measured this setup at (kept loaded for retraining). */
            if ((rc = load_sources(source_paths, n_source_paths, source_data)) != CLI_OK)
                goto done;
            for (size_t f = 0; f < n_source_paths; f++)
                measured |= dataset_threads(source_data[f], &here);
            by = "datasets";
        }
        if (measured && (asked & ~measured)) {
            /* Measured here, at other thread counts: the in-network prices
             * and the trees are those counts'. */
            same = 0;
            if (!quiet && !json) {
                char had[256], want[256];
                cli_threads_text(measured, had, sizeof had);
                cli_threads_text(asked & ~measured, want, sizeof want);
                printf("the model's %s measured this CPU at %s, not %s: calibrating\n", by, had, want);
                fflush(stdout);
            }
        }
        if (same) {
            if ((st = convsel_model_save(source, out_path)) != CONVSEL_OK) {
                rc = cli_fail(CMD, st);
                goto done;
            }
            if (json)
                printf("{\"samples\": 0, \"calibrated\": false, \"model\": \"%s\"}\n", convsel_model_id(source));
            else if (!quiet)
                printf("the model already describes this CPU (%s, %s); copied it to %s without calibrating\n",
                       here.model_name, convsel_isa_name(here.isa_cap), out_path);
            goto done;
        }
    }
    /* The source's datasets, before anything is measured: a bad one must
     * not cost the samples. */
    if ((rc = load_sources(source_paths, n_source_paths, source_data)) != CLI_OK)
        goto done;

    if (from_data) {
        if ((st = convsel_dataset_load(from_data, &loaded)) != CONVSEL_OK) {
            rc = cli_fail(CMD, st);
            goto done;
        }
        if (samples == 0) {
            target = loaded;
            loaded = NULL;
        } else {
            /* K of the file's configurations, chosen as they would be for profiling. */
            size_t n = convsel_dataset_size(loaded);
            record_candidate = malloc((n ? n : 1) * sizeof *record_candidate);
            cands.items = malloc((n ? n : 1) * sizeof *cands.items);
            chosen = malloc((size_t)samples * sizeof *chosen);
            if (!record_candidate || !cands.items || !chosen) {
                fprintf(stderr, "convsel %s: out of memory\n", CMD);
                rc = CLI_FAIL;
                goto done;
            }
            cands.cap = n ? n : 1;
            const convsel_fingerprint *cpu = convsel_dataset_fingerprint_count(loaded)
                                                 ? convsel_dataset_fingerprint(loaded, 0)
                                                 : NULL;
            if ((st = convsel_calibrate_candidates_from_dataset(loaded, source, cands.items, &cands.n,
                                                                record_candidate)) != CONVSEL_OK ||
                (st = convsel_calibrate_choose(source, cands.items, cands.n, (size_t)samples, seed, cpu, chosen)) !=
                    CONVSEL_OK ||
                (st = convsel_calibrate_samples_from_dataset(loaded, record_candidate, cands.n, chosen,
                                                             (size_t)samples, &target)) != CONVSEL_OK) {
                rc = cli_fail(CMD, st);
                goto done;
            }
        }
    } else {
        convsel_fingerprint cpu;
        if ((st = convsel_fingerprint_get(&cpu)) != CONVSEL_OK) {
            rc = cli_fail(CMD, st);
            goto done;
        }
        char default_dir[4096];
        if (n_pool_paths == 0 && cli_pool_default_dir(default_dir, sizeof default_dir))
            pool_paths[n_pool_paths++] = default_dir;
        size_t from_networks = 0;
        for (size_t i = 0; i < n_pool_paths && rc == CLI_OK; i++)
            rc = cli_pool_add_path(pool_paths[i], max_flops, threads, n_threads, &cands, &from_networks);
        if (rc == CLI_OK && sampled > 0)
            rc = cli_pool_add_sampled(pool_paths, n_pool_paths, sampled, seed, max_flops, threads, n_threads, &cands);
        if (rc != CLI_OK)
            goto done;
        if (!quiet)
            fprintf(stderr, "convsel %s: %zu candidates (%zu from network layers, the rest sampled); choosing %ld\n",
                    CMD, cands.n, from_networks, samples);

        /* Only the primitives the model knows are worth timing. */
        selected = calloc(convsel_primitive_count(), 1);
        size_t n_selected = 0;
        for (size_t i = 0; selected && i < convsel_primitive_count(); i++) {
            size_t j;
            if (!convsel_primitive_is_reference(i) &&
                convsel_model_primitive_find(source, convsel_primitive_name(i), &j) == CONVSEL_OK) {
                selected[i] = 1;
                n_selected++;
            }
        }
        if (!selected || n_selected == 0) {
            fprintf(stderr, "convsel %s: the model knows none of this build's primitives\n", CMD);
            rc = CLI_FAIL;
            goto done;
        }
        chosen = malloc((size_t)samples * sizeof *chosen);
        if (!chosen) {
            rc = CLI_FAIL;
            goto done;
        }
        st = convsel_calibrate_choose(source, cands.items, cands.n, (size_t)samples, seed, &cpu, chosen);
        if (st != CONVSEL_OK) {
            rc = cli_fail(CMD, st);
            goto done;
        }
        convsel_timing_options timing;
        convsel_timing_options_default(&timing);
        timing.warmup_s = 0.02;
        timing.min_rounds = 3;
        timing.max_time_s = max_time_s;
        timing.target_rel_ci = 0.05;
        if ((st = convsel_dataset_create(&target)) != CONVSEL_OK) {
            rc = cli_fail(CMD, st);
            goto done;
        }
        /* Profiling gets what the bound leaves after the probes' times and
         * retraining's least share (a fifth of it). */
        double deadline = 0.0;
        if (total_time_s > 0)
            deadline = t_start + fmax(total_time_s * 4 / 5 - probes_s, 0.0);
        double t0 = cli_now();
        size_t profiled = 0;
        convsel_busy_mark_now(&mark);
        rc = cli_pool_profile(&cands, chosen, (size_t)samples, selected, &timing, &cpu, deadline, quiet || json,
                              target, &profiled);
        busy_since(&mark, BUSY_PROFILE, others, steal);
        profile_s = cli_now() - t0;
        if (rc != CLI_OK)
            goto done;
        samples_cut = profiled < (size_t)samples;
        if (samples_cut && !quiet && !json)
            fprintf(stderr,
                    "convsel %s: note: profiled %zu of the %ld samples: the next would have run past profiling's "
                    "%.1f s share of --total-time-s (a larger --total-time-s, or 0, profiles them all)\n",
                    CMD, profiled, samples, deadline - t_start);
        if (data_path && (st = convsel_dataset_save(target, data_path)) != CONVSEL_OK) {
            rc = cli_fail(CMD, st);
            goto done;
        }
    }

    /* Until here a default with the datasets at hand stood as retrain. */
    const int method_by_default = !method_given && n_source_paths > 0;
    if (method_by_default) {
        params.method =
            convsel_calibrate_default_method((const convsel_dataset *const *)source_data, n_source_paths, target);
        if (!quiet && !json)
            fprintf(stderr, "convsel %s: method %s: %s\n", CMD, convsel_calibrate_method_name(params.method),
                    params.method == CONVSEL_CALIBRATE_RETRAIN
                        ? "this CPU's ISA cap, cores or a thread count is new to the model's datasets"
                        : "this CPU's ISA cap, cores and thread counts all occur in the model's datasets, "
                          "so retraining could not tell it apart; the lines, and residual trees if "
                          "cross-validation says they pay (docs/transfer.md)");
    }
    const double fit_t0 = cli_now();
    if (params.method == CONVSEL_CALIBRATE_RETRAIN && total_time_s > 0) {
        /* Retraining (its table and its trees) gets what the bound leaves
         * after the probes' times, and never less than a fifth of it. */
        params.time_limit_s = fmax(total_time_s - (fit_t0 - t_start) - (from_data ? 0.0 : probes_s), total_time_s / 5);
    }
    if (params.method == CONVSEL_CALIBRATE_RETRAIN) {
        if (!quiet && !json)
            fprintf(stderr, "convsel %s: retraining on %zu datasets and the samples\n", CMD, n_source_paths);
        st = convsel_model_retrain(source, (const convsel_dataset *const *)source_data, n_source_paths, target,
                                   &params, &calibrated);
    } else {
        st = convsel_model_calibrate(source, target, &params, &calibrated);
    }
    fit_s = cli_now() - fit_t0;
    if (st != CONVSEL_OK) {
        rc = cli_fail(CMD, st);
        goto done;
    }
    size_t fit_jobs = 0, fit_fewest = 0, fit_cut = convsel_model_training_cut(calibrated, &fit_jobs, &fit_fewest);
    const size_t fit_trees = (size_t)convsel_model_params(source)->trees;
    /* Cut before a quarter of its trees, retraining ranked worse than the
     * lines (bench/results/retrain_cut_session41.md): fit those instead. */
    const int fit_fallback = fit_cut && 4 * fit_fewest < fit_trees;
    if (fit_cut && !quiet && !json)
        fprintf(stderr,
                "convsel %s: note: retraining stopped adding trees at its %.1f s share of --total-time-s in %zu of "
                "%zu ensembles, one at %zu of %zu trees; %s\n",
                CMD, params.time_limit_s, fit_cut, fit_jobs, fit_fewest, fit_trees,
                fit_fallback ? "under a quarter of them, it ranks worse than the lines: calibrating with "
                               "linear-or-both instead (a larger --total-time-s, or 0, lets retraining finish)"
                             : "the model then depends on this machine's speed (a larger --total-time-s, or 0, "
                               "lets it finish)");
    const convsel_calibrate_method method_asked = params.method;
    if (fit_fallback) {
        convsel_model_destroy(calibrated);
        calibrated = NULL;
        params.method = CONVSEL_CALIBRATE_LINEAR_OR_BOTH;
        st = convsel_model_calibrate(source, target, &params, &calibrated);
        fit_s = cli_now() - fit_t0;
        if (st != CONVSEL_OK) {
            rc = cli_fail(CMD, st);
            goto done;
        }
    }
    if (!from_data && reorder_time_s > 0) {
        double t0 = cli_now();
        struct probe p = {"reorders", selected, seed, &reorder_samples, NULL, NULL, &n_reorder_samples, &left_out};
        convsel_busy_mark_now(&mark);
        rc = probe_pool(&cands, threads, n_threads, reorder_time_s,
                        probe_cap(t_start, total_time_s, reorder_time_s, probes_s),
                        quiet || json, &p);
        busy_since(&mark, BUSY_REORDERS, others, steal);
        if (rc == CLI_OK) {
            convsel_fingerprint cpu;
            if ((st = convsel_fingerprint_get(&cpu)) != CONVSEL_OK ||
                (st = convsel_model_calibrate_reorders(calibrated, &cpu, reorder_samples, n_reorder_samples)) !=
                    CONVSEL_OK)
                rc = cli_fail(CMD, st);
        }
        reorder_s = cli_now() - t0;
        if (rc != CLI_OK)
            goto done;
    }
    if (!from_data && cold_time_s > 0) {
        double t0 = cli_now();
        struct probe p = {"cold reads", selected, seed, NULL, &cold_samples, NULL, &n_cold_samples, &left_out};
        convsel_busy_mark_now(&mark);
        rc = probe_pool(&cands, threads, n_threads, cold_time_s,
                        probe_cap(t_start, total_time_s, cold_time_s, cold_time_s + network_time_s), quiet || json,
                        &p);
        busy_since(&mark, BUSY_COLD, others, steal);
        if (rc == CLI_OK) {
            convsel_fingerprint cpu;
            if ((st = convsel_fingerprint_get(&cpu)) != CONVSEL_OK ||
                (st = convsel_model_calibrate_cold(calibrated, &cpu, cold_samples, n_cold_samples)) != CONVSEL_OK)
                rc = cli_fail(CMD, st);
        }
        cold_s = cli_now() - t0;
        if (rc != CLI_OK)
            goto done;
    }
    if (!from_data && network_time_s > 0) {
        double t0 = cli_now();
        struct probe p = {"convolutions", selected, seed, NULL, NULL, &conv_samples, &n_conv_samples, &left_out};
        convsel_busy_mark_now(&mark);
        rc = probe_pool(&cands, threads, n_threads, network_time_s,
                        probe_cap(t_start, total_time_s, network_time_s, network_time_s), quiet || json, &p);
        busy_since(&mark, BUSY_CONVOLUTIONS, others, steal);
        if (rc == CLI_OK) {
            convsel_fingerprint cpu;
            if ((st = convsel_fingerprint_get(&cpu)) != CONVSEL_OK ||
                (st = convsel_model_calibrate_network(calibrated, &cpu, conv_samples, n_conv_samples)) != CONVSEL_OK)
                rc = cli_fail(CMD, st);
        }
        network_s = cli_now() - t0;
        if (rc != CLI_OK)
            goto done;
    }
    if ((st = convsel_model_save(calibrated, out_path)) != CONVSEL_OK) {
        rc = cli_fail(CMD, st);
        goto done;
    }
    double seconds = cli_now() - t_start;
    convsel_calibration_info info;
    convsel_model_calibration(calibrated, 0, &info);
    warn_busy(others, steal, quiet);
    if (json) {
        printf("{\"samples\": %zu, \"samples_asked\": %ld, \"samples_cut\": %s, \"records\": %zu, \"method\": ",
               info.samples, samples, samples_cut ? "true" : "false", info.records);
        json_string(convsel_calibrate_method_name(info.method));
        printf(", \"chosen_by_auto\": %s, \"method_by_default\": %s, \"method_asked\": ",
               info.auto_chosen ? "true" : "false", method_by_default ? "true" : "false");
        json_string(convsel_calibrate_method_name(method_asked));
        printf(", \"cv_rmse_log\": %.4f, \"cv_regret_log\": %.4f, \"seconds\": %.3f, \"profile_seconds\": %.3f, "
               "\"fit_seconds\": %.3f, \"source_model\": ",
               info.cv_rmse_log, info.cv_regret_log, seconds, profile_s, fit_s);
        json_string(convsel_model_id(source));
        printf(", \"model\": ");
        json_string(convsel_model_id(calibrated));
        printf(", \"cpu\": ");
        json_string(info.cpu.model_name);
        printf(", \"isa\": ");
        json_string(convsel_isa_name(info.cpu.isa_cap));
        printf(", \"threads\": [");
        for (int b = 0, first = 1; b < 64; b++)
            if (info.threads_mask >> b & 1) {
                printf("%s%d", first ? "" : ", ", b + 1);
                first = 0;
            }
        putchar(']');
        printf(", \"reorder_samples\": %zu, \"reorder_seconds\": %.3f, \"reorder_scale\": ", info.reorder_samples,
               reorder_s);
        json_slots(info.reorder_by_threads, NULL);
        printf(", \"reorder_fixed_ms\": ");
        json_slots(info.reorder_fixed_ms, NULL);
        printf(", \"reorder_loo_error\": ");
        json_slots(info.reorder_loo_fixed, info.reorder_loo_factor);
        double fittable[CONVSEL_REORDER_MODEL_THREADS], own[CONVSEL_REORDER_MODEL_THREADS];
        for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++) {
            fittable[t] = info.reorder_pairs_fittable[t];
            own[t] = info.reorder_pairs_own[t];
        }
        printf(", \"reorder_pairs_own\": ");
        json_slots(fittable, own);
        printf(", \"reorder_pairs_loo_error\": ");
        json_slots(info.reorder_loo_scaled, info.reorder_loo_own);
        printf(", \"cold_samples\": %zu, \"cold_seconds\": %.3f, \"cold_ms_per_mb\": ", info.cold_samples, cold_s);
        json_slots(info.cold_ms_per_mb, NULL);
        printf(", \"network_samples\": %zu, \"network_seconds\": %.3f, \"network_ms_per_mb\": ",
               info.network_samples, network_s);
        json_slots(info.network_price_max, info.network_price_min);
        printf(", \"networks_left_out\": %zu, \"fit_time_limit_s\": %.3f, \"fit_cut\": %zu, \"fit_fewest_trees\": %zu, "
               "\"fit_fallback\": %s, \"output\": ",
               left_out, params.time_limit_s, fit_cut, fit_fewest, fit_fallback ? "true" : "false");
        json_string(out_path);
        printf(", \"busy_others_cpus\": ");
        json_phases(others);
        printf(", \"busy_steal_cpus\": ");
        json_phases(steal);
        printf("}\n");
    } else {
        char at[256];
        cli_threads_text(info.threads_mask, at, sizeof at);
        printf("calibrated model %s -> %s for %s (%s) at %s\n", convsel_model_id(source), convsel_model_id(calibrated),
               info.cpu.model_name, convsel_isa_name(info.cpu.isa_cap), at);
        /* Which method chose the fitted one (auto or linear-or-both: what
         * was asked), and whether that was the default. */
        char how[128] = "";
        if (fit_fallback)
            snprintf(how, sizeof how, " (chosen by %s: retraining was cut short by --total-time-s)",
                     convsel_calibrate_method_name(params.method));
        else if (info.auto_chosen)
            snprintf(how, sizeof how, " (chosen by %s%s)", convsel_calibrate_method_name(params.method),
                     method_by_default ? ", the default for this CPU" : "");
        else if (method_by_default)
            snprintf(how, sizeof how, " (the default for this CPU)");
        printf("  %zu configurations, %zu records, method %s%s, %zu residual trees\n", info.samples, info.records,
               convsel_calibrate_method_name(info.method), how, info.residual_trees);
        if (info.method == CONVSEL_CALIBRATE_RETRAIN)
            printf("  retrained on %zu datasets plus the samples x%d: validation error %.1f%% (RMS in log)%s\n",
                   n_source_paths, params.retrain_copies, 100 * info.cv_rmse_log,
                   fit_cut ? ", cut short by --total-time-s" : "");
        else if (info.cv_rmse_log > 0)
            printf("  cross-validated on unsampled configurations: error %.1f%% (RMS in log), regret %.1f%% (geometric mean)\n",
                   100 * info.cv_rmse_log, 100 * expm1(info.cv_regret_log));
        if (info.reorder_samples) {
            printf("  %zu reorders timed inside networks: the model's reorder prices", info.reorder_samples);
            for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++)
                if (info.reorder_by_threads[t] > 0) {
                    if (info.reorder_fixed_ms[t] > 0)
                        printf(" (line + %.4f ms) x%.2f", info.reorder_fixed_ms[t] / info.reorder_by_threads[t],
                               info.reorder_by_threads[t]);
                    else
                        printf(" x%.2f", info.reorder_by_threads[t]);
                    text_slot(t);
                }
            printf(" (per layout pair in the model)\n");
            for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++)
                if (info.reorder_loo_factor[t] > 0) {
                    printf("    a fixed cost per reorder");
                    text_slot(t);
                    printf(": %s (samples left out, RMS log error: %.0f%% with a factor alone, %.0f%% with it)\n",
                           info.reorder_fixed_ms[t] > 0 ? "kept" : "not kept", 100 * info.reorder_loo_factor[t],
                           100 * info.reorder_loo_fixed[t]);
                }
            for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++)
                if (info.reorder_pairs_fittable[t] > 0) {
                    printf("    layout pairs priced by a line of their own");
                    text_slot(t);
                    printf(": %d of the %d that could fit one (samples left out, RMS log error: %.0f%% scaled, "
                           "%.0f%% own)",
                           info.reorder_pairs_own[t], info.reorder_pairs_fittable[t], 100 * info.reorder_loo_scaled[t],
                           100 * info.reorder_loo_own[t]);
                    if (info.reorder_pairs_mean[t] > 0)
                        printf("; %d pairs never timed take their mean", info.reorder_pairs_mean[t]);
                    putchar('\n');
                }
        }
        if (info.cold_samples) {
            printf("  %zu cold reads timed inside networks: reading a layer's input from memory costs",
                   info.cold_samples);
            for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++)
                if (info.cold_ms_per_mb[t] > 0) {
                    printf(" %.3f ms/MB", info.cold_ms_per_mb[t]);
                    text_slot(t);
                }
            printf("\n");
        }
        if (info.network_samples) {
            printf("  %zu convolutions timed inside networks against alone: their weights cost", info.network_samples);
            int priced = 0;
            for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++)
                if (info.network_price_max[t] > 0) {
                    printf(" %.3f-%.3f ms/MB by primitive", info.network_price_min[t], info.network_price_max[t]);
                    text_slot(t);
                    priced = 1;
                }
            printf("%s in selection\n", priced ? "" : " nothing measurable");
        }
        text_busy(others, steal);
        printf("  %.1f s (profiling %.1f s, fitting %.1f s, reorders %.1f s, cold reads %.1f s, convolutions in "
               "networks %.1f s); wrote %s\n",
               seconds, profile_s, fit_s, reorder_s, cold_s, network_s, out_path);
    }

done:
    free(chosen);
    free(record_candidate);
    free(selected);
    free(reorder_samples);
    free(cold_samples);
    free(conv_samples);
    cli_pool_free(&cands);
    convsel_dataset_destroy(loaded);
    convsel_dataset_destroy(target);
    for (size_t f = 0; f < n_source_paths; f++)
        convsel_dataset_destroy(source_data[f]);
    convsel_model_destroy(calibrated);
    convsel_model_destroy(source);
    return rc;
}
