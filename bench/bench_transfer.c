/*
 * Few-shot transfer (docs/transfer.md): how well a model trained on one CPU
 * predicts another after calibration on K configurations profiled there.
 *
 * The target dataset is split by shape into a training part (the pool the K
 * configurations are drawn from, so nothing new is profiled) and a held-out
 * part every model is scored on. For each K: the source unchanged, a model
 * trained from scratch on the same K configurations, the three calibration
 * methods on the actively chosen K (and the one convsel calibrate would take
 * by default), the default method on K drawn at random,
 * and a model trained on the whole training part. Writes PREFIX.md and
 * PREFIX.csv.
 *
 * --synthetic replaces both files by synthetic.h's source CPU and
 * synthetic_transfer.h's target CPU, for use before real profiles exist.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "convsel.h"
#include "../tests/synthetic_transfer.h"

#define MAX_KS 16
#define MAX_REPEATS 64

struct options {
    const char *source_path, *target_path, *out_prefix;
    const char *calib_text; /* --calib as given, NULL without it */
    int synthetic;
    double test_frac;
    uint64_t seed;
    int repeats;
    size_t ks[MAX_KS];
    size_t n_ks;
    int threads;
    int as_selector;
    const char *source_data; /* --source-data as given, NULL without it */
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: bench_transfer (--source MODEL --target DATA | --synthetic) [--ks LIST] [--repeats R]\n"
            "                      [--test-frac F] [--seed S] [--threads N] [--calib K=V,...] [--out PREFIX]\n"
            "\n"
            "Calibrates the source model to the target dataset's CPU from K of the target's\n"
            "configurations and scores it on held-out ones, against the source unchanged, a model\n"
            "trained from scratch on the same K, and one trained on the target's whole training part.\n"
            "\n"
            "  --source MODEL   model trained on another CPU\n"
            "  --target DATA    dataset profiled on the target CPU (one CPU and ISA cap)\n"
            "  --synthetic      synthetic source and target CPUs instead (tests/synthetic_transfer.h)\n"
            "  --as-selector    price predictions as convsel select does (convsel_primitive_runs_as); run\n"
            "                   under the target's ISA cap (CONVSEL_ISA=avx2 for an AVX2 target)\n"
            "  --ks LIST        sample counts (default 5,10,20,50,100; those above the pool are skipped)\n"
            "  --repeats R      seeds averaged per K (default 3)\n"
            "  --test-frac F    share of the target's shapes held out (default 0.3)\n"
            "  --seed S         split and first choice seed (default 1)\n"
            "  --threads N      training threads (default: all)\n"
            "  --calib K=V,...  calibration parameters other than the defaults (convsel_calibrate_params\n"
            "                   field names: slope_prior, trees, max_depth, learning_rate, ...)\n"
            "  --source-data LIST  the datasets the source model was trained on (comma-separated): adds\n"
            "                   the retrain method's row (convsel_model_retrain), the same data retrained\n"
            "                   alone (the control) and with the target's whole training part; the\n"
            "                   default method (its row, the Targets section, the random-K row) is then\n"
            "                   retrain or linear-or-both by convsel_calibrate_default_method, as in convsel\n"
            "                   calibrate when the model's datasets are at hand\n"
            "  --retrain-copies R  how many times retraining gives each sample (default: the library's)\n"
            "  --out PREFIX     writes PREFIX.md and PREFIX.csv (default bench/results/transfer,\n"
            "                   bench/results/transfer_synthetic with --synthetic)\n");
}

static int parse_list(const char *text, size_t *out, size_t *n)
{
    char *copy = strdup(text), *save = NULL;
    *n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(tok, &end, 10);
        if (*end || v < 1 || *n == MAX_KS) {
            free(copy);
            return -1;
        }
        out[(*n)++] = (size_t)v;
    }
    free(copy);
    return *n ? 0 : -1;
}

/* Calibration parameters other than the defaults (--calib key=value,...). */
static convsel_calibrate_params calib_params;

static int parse_calib(const char *text)
{
    char *copy = strdup(text), *save = NULL;
    int bad = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && !bad; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            bad = 1;
            break;
        }
        *eq = '\0';
        double v = atof(eq + 1);
        convsel_calibrate_params *p = &calib_params;
        if (strcmp(tok, "pooled_prior") == 0)
            p->pooled_prior = v;
        else if (strcmp(tok, "offset_prior") == 0)
            p->offset_prior = v;
        else if (strcmp(tok, "paired") == 0)
            p->paired = (int)v;
        else if (strcmp(tok, "slope_prior") == 0)
            p->slope_prior = v;
        else if (strcmp(tok, "huber") == 0)
            p->huber = v;
        else if (strcmp(tok, "trees") == 0)
            p->trees = (int)v;
        else if (strcmp(tok, "learning_rate") == 0)
            p->learning_rate = v;
        else if (strcmp(tok, "max_depth") == 0)
            p->max_depth = (int)v;
        else if (strcmp(tok, "min_leaf") == 0)
            p->min_leaf = (int)v;
        else if (strcmp(tok, "lambda") == 0)
            p->lambda = v;
        else if (strcmp(tok, "retrain_copies") == 0)
            p->retrain_copies = (int)v;
        else
            bad = 1;
    }
    free(copy);
    return bad ? -1 : 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    memset(o, 0, sizeof *o);
    convsel_calibrate_params_default(&calib_params);
    o->test_frac = 0.3;
    o->seed = 1;
    o->repeats = 3;
    static const size_t default_ks[] = {5, 10, 20, 50, 100};
    memcpy(o->ks, default_ks, sizeof default_ks);
    o->n_ks = 5;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--synthetic") == 0) {
            o->synthetic = 1;
        } else if (strcmp(a, "--as-selector") == 0) {
            o->as_selector = 1;
        } else if (!v) {
            fprintf(stderr, "bench_transfer: %s needs a value (or is unknown)\n", a);
            return -1;
        } else if (strcmp(a, "--source") == 0) {
            o->source_path = v, i++;
        } else if (strcmp(a, "--target") == 0) {
            o->target_path = v, i++;
        } else if (strcmp(a, "--out") == 0) {
            o->out_prefix = v, i++;
        } else if (strcmp(a, "--ks") == 0) {
            if (parse_list(v, o->ks, &o->n_ks))
                return fprintf(stderr, "bench_transfer: bad --ks '%s'\n", v), -1;
            i++;
        } else if (strcmp(a, "--calib") == 0) {
            if (parse_calib(v))
                return fprintf(stderr, "bench_transfer: bad --calib '%s'\n", v), -1;
            o->calib_text = v, i++;
        } else if (strcmp(a, "--source-data") == 0) {
            /* An empty entry (",a", "a,,b", an unset shell variable) would
             * quietly retrain on less data than the source had. */
            size_t n = strlen(v);
            if (n == 0 || v[0] == ',' || v[n - 1] == ',' || strstr(v, ",,"))
                return fprintf(stderr, "bench_transfer: --source-data '%s' has an empty entry\n", v), -1;
            o->source_data = v, i++;
        } else if (strcmp(a, "--retrain-copies") == 0) {
            calib_params.retrain_copies = atoi(v), i++;
        } else if (strcmp(a, "--repeats") == 0) {
            o->repeats = atoi(v), i++;
        } else if (strcmp(a, "--test-frac") == 0) {
            o->test_frac = atof(v), i++;
        } else if (strcmp(a, "--seed") == 0) {
            o->seed = strtoull(v, NULL, 10), i++;
        } else if (strcmp(a, "--threads") == 0) {
            o->threads = atoi(v), i++;
        } else {
            fprintf(stderr, "bench_transfer: unknown option '%s'\n", a);
            return -1;
        }
    }
    if (!o->synthetic && (!o->source_path || !o->target_path)) {
        fprintf(stderr, "bench_transfer: give --source and --target, or --synthetic\n");
        return -1;
    }
    if (o->repeats < 1 || o->repeats > MAX_REPEATS || !(o->test_frac > 0 && o->test_frac < 1))
        return fprintf(stderr, "bench_transfer: bad --repeats (1..%d) or --test-frac\n", MAX_REPEATS), -1;
    if (calib_params.retrain_copies < 1 || calib_params.retrain_copies > 1000)
        return fprintf(stderr, "bench_transfer: bad --retrain-copies (1..1000)\n"), -1;
    if (o->source_data && o->synthetic)
        return fprintf(stderr, "bench_transfer: --source-data needs a real --source\n"), -1;
    if (!o->out_prefix)
        o->out_prefix = o->synthetic ? "bench/results/transfer_synthetic" : "bench/results/transfer";
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, convsel_status st)
{
    fprintf(stderr, "bench_transfer: %s: %s (%s)\n", what, convsel_status_str(st), convsel_last_error());
    exit(1);
}

/* ---------------------------------------------------------------- the pool */

/* The configurations of a dataset's conv records: candidates for the chooser,
 * and each record's candidate, to take the chosen ones' records again. */
struct pool {
    size_t n;
    convsel_calibrate_candidate *cand;
    size_t *record_candidate;
};

static void pool_build(const convsel_dataset *ds, const convsel_model *model, struct pool *pool)
{
    size_t n = convsel_dataset_size(ds);
    pool->cand = malloc((n ? n : 1) * sizeof *pool->cand);
    pool->record_candidate = malloc((n ? n : 1) * sizeof *pool->record_candidate);
    if (!pool->cand || !pool->record_candidate) {
        fprintf(stderr, "bench_transfer: out of memory for a pool of %zu records\n", n);
        exit(1);
    }
    convsel_status st =
        convsel_calibrate_candidates_from_dataset(ds, model, pool->cand, &pool->n, pool->record_candidate);
    if (st != CONVSEL_OK)
        die("pool", st);
}

static void pool_free(struct pool *pool)
{
    free(pool->cand);
    free(pool->record_candidate);
}

/* The records of ds whose configuration is one of the chosen pool entries. */
static convsel_dataset *subset(const convsel_dataset *ds, const struct pool *pool, const size_t *chosen, size_t k)
{
    convsel_dataset *out;
    convsel_status st = convsel_calibrate_samples_from_dataset(ds, pool->record_candidate, pool->n, chosen, k, &out);
    if (st != CONVSEL_OK)
        die("samples", st);
    return out;
}

/* ---------------------------------------------------------------- results */

/* Rows: ROW_METHOD + m for calibration method m, in the enum's order. */
enum {
    ROW_SOURCE,
    ROW_SCRATCH,
    ROW_METHOD,
    ROW_RANDOM = ROW_METHOD + CONVSEL_CALIBRATE_METHOD_COUNT,
    ROW_FULL,
    ROW_RETRAIN_NONE, /* --source-data: source data alone, this split's seed */
    ROW_RETRAIN_FULL, /* --source-data: source data + the whole training part */
    ROW_RETRAIN_LINEAR, /* --source-data: retrain, then linear on the same samples */
    ROW_DEFAULT,        /* the method convsel calibrate would take on these samples */
    ROW_COUNT
};
/* Designated, so that a method added to the enum cannot shift the names
 * (main checks that none is missing). */
static const char *const row_names[ROW_COUNT] = {
    [ROW_SOURCE] = "source unchanged",
    [ROW_SCRATCH] = "scratch on K",
    [ROW_METHOD + CONVSEL_CALIBRATE_LINEAR] = "calibrated linear",
    [ROW_METHOD + CONVSEL_CALIBRATE_TREES] = "calibrated trees",
    [ROW_METHOD + CONVSEL_CALIBRATE_BOTH] = "calibrated both",
    [ROW_METHOD + CONVSEL_CALIBRATE_POOLED] = "calibrated pooled",
    [ROW_METHOD + CONVSEL_CALIBRATE_AUTO] = "calibrated auto",
    [ROW_METHOD + CONVSEL_CALIBRATE_RETRAIN] = "calibrated retrain (source data + K)",
    [ROW_METHOD + CONVSEL_CALIBRATE_LINEAR_OR_BOTH] = "calibrated linear-or-both",
    [ROW_RANDOM] = "default on random K",
    [ROW_FULL] = "full target train",
    [ROW_RETRAIN_NONE] = "retrained on source data alone",
    [ROW_RETRAIN_FULL] = "retrained on source data + full target",
    [ROW_RETRAIN_LINEAR] = "retrain, then linear on the same K",
    [ROW_DEFAULT] = "calibrated default (calibrate's choice)"};

struct cell {
    double spearman, spearman_pooled, mape, top1, regret_mean, regret_p95, seconds;
    int n;
    double regret[MAX_REPEATS]; /* each split's mean regret, in split order */
};

static void cell_add(struct cell *c, const convsel_metrics *m, double seconds)
{
    c->regret[c->n] = m->regret_mean;
    c->spearman += m->spearman;
    c->spearman_pooled += m->spearman_pooled;
    c->mape += m->mape;
    c->top1 += m->top1;
    c->regret_mean += m->regret_mean;
    c->regret_p95 += m->regret_p95;
    c->seconds += seconds;
    c->n++;
}

static struct cell cell_mean(const struct cell *c)
{
    struct cell m = *c;
    double n = c->n ? c->n : 1;
    m.spearman /= n, m.spearman_pooled /= n, m.mape /= n, m.top1 /= n, m.regret_mean /= n, m.regret_p95 /= n, m.seconds /= n;
    return m;
}

/* The mean over the splits of c's regret minus base's in the same split,
 * and its standard error: the methods share the splits, so their paired
 * differences are far less noisy than their regrets. */
static void paired_regret(const struct cell *c, const struct cell *base, double *mean, double *se)
{
    int n = c->n < base->n ? c->n : base->n;
    double sum = 0, sum2 = 0;
    for (int i = 0; i < n; i++) {
        double d = c->regret[i] - base->regret[i];
        sum += d;
        sum2 += d * d;
    }
    *mean = n ? sum / n : 0;
    *se = n > 1 ? sqrt(fmax(0.0, sum2 / n - *mean * *mean) / (n - 1)) : 0;
}

static int as_selector; /* --as-selector */

/* --source-data: the datasets the source was trained on, and room for one
 * more (the target's training part, for the "+ full target" row). */
static const convsel_dataset **source_sets;
static size_t n_source_sets;

/* convsel calibrate's default method on these samples: where the source's
 * datasets are at hand (as with a MODEL.datasets file), retrain or linear-or-both by
 * convsel_calibrate_default_method; else the library's. */
static convsel_calibrate_method default_method(const convsel_dataset *samples)
{
    convsel_calibrate_params p;
    convsel_calibrate_params_default(&p);
    return source_sets ? convsel_calibrate_default_method(source_sets, n_source_sets, samples) : p.method;
}

/* --as-selector: the source's held-out rows priced as another kernel, left
 * out as reference loops, and of unknown kernel, summed over the splits. */
static size_t priced_as_rows, unranked_rows, unknown_kernel_rows, held_out_rows;

static void eval_into(const convsel_model *model, const convsel_dataset *test, struct cell *c, double seconds)
{
    convsel_metrics m;
    const convsel_dataset *sets[1] = {test};
    convsel_status st = as_selector ? convsel_model_eval_as_selector(model, sets, 1, &m)
                                    : convsel_model_eval(model, sets, 1, &m);
    if (st != CONVSEL_OK)
        die("eval", st);
    cell_add(c, &m, seconds);
}

/* The source unchanged, with the pricing's counts. */
static void eval_source(const convsel_model *model, const convsel_dataset *test, struct cell *c)
{
    convsel_metrics m;
    const convsel_dataset *sets[1] = {test};
    convsel_status st = as_selector ? convsel_model_eval_as_selector(model, sets, 1, &m)
                                    : convsel_model_eval(model, sets, 1, &m);
    if (st != CONVSEL_OK)
        die("eval", st);
    cell_add(c, &m, 0.0);
    priced_as_rows += m.n_priced_as;
    unranked_rows += m.n_unranked;
    unknown_kernel_rows += m.n_kernel_unknown;
    held_out_rows += m.n_records;
}

/* What auto and linear-or-both chose, and what the default was, per K and
 * method, over the repeats; printed in this order under these headings. */
enum { CHOSE_AUTO, CHOSE_LOB, CHOSE_DEFAULT, CHOSE_KINDS };
static const char *const chose_what[CHOSE_KINDS] = {"\nauto chose:", "\nlinear-or-both chose:",
                                                    "\nthe default was:"};
static int chose[CHOSE_KINDS][MAX_KS][CONVSEL_CALIBRATE_METHOD_COUNT];

/* NULL for the retrain method without --source-data. */
static convsel_model *calibrate(const convsel_model *source, const convsel_dataset *samples,
                                convsel_calibrate_method method, uint64_t seed, double *seconds)
{
    convsel_calibrate_params p = calib_params;
    p.method = method;
    p.seed = seed;
    convsel_model *out;
    if (method == CONVSEL_CALIBRATE_RETRAIN && !source_sets)
        return NULL;
    double t0 = now_s();
    convsel_status st = method == CONVSEL_CALIBRATE_RETRAIN
                            ? convsel_model_retrain(source, source_sets, n_source_sets, samples, &p, &out)
                            : convsel_model_calibrate(source, samples, &p, &out);
    *seconds = now_s() - t0;
    if (st != CONVSEL_OK)
        die("calibrate", st);
    return out;
}

/* ---------------------------------------------------------------- synthetic inputs */

static void synthetic_inputs(const struct options *o, convsel_model **source, convsel_dataset **target)
{
    convsel_dataset *src;
    convsel_status st = syn_dataset(o->seed + 100, 10, 20, 300, 0.05, &src);
    if (st != CONVSEL_OK)
        die("synthetic source", st);
    convsel_train_params p;
    convsel_train_params_default(&p);
    p.trees = 300;
    p.threads = o->threads;
    const convsel_dataset *sets[1] = {src};
    fprintf(stderr, "bench_transfer: training the synthetic source model on %zu records\n",
            convsel_dataset_size(src));
    if ((st = convsel_model_train(sets, 1, &p, NULL, NULL, source)) != CONVSEL_OK)
        die("train source", st);
    convsel_dataset_destroy(src);
    if ((st = syn_target_dataset(o->seed + 200, 400, 0.05, target)) != CONVSEL_OK)
        die("synthetic target", st);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    for (int r = 0; r < ROW_COUNT; r++)
        if (!row_names[r]) {
            fprintf(stderr, "bench_transfer: row %d has no name (a method added without one?)\n", r);
            return 1;
        }
    struct options o;
    if (parse_options(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    as_selector = o.as_selector;
    convsel_model *source = NULL;
    convsel_dataset *target = NULL;
    convsel_status st;
    if (o.synthetic) {
        synthetic_inputs(&o, &source, &target);
    } else {
        if ((st = convsel_model_load(o.source_path, &source)) != CONVSEL_OK)
            die(o.source_path, st);
        if ((st = convsel_dataset_load(o.target_path, &target)) != CONVSEL_OK)
            die(o.target_path, st);
    }
    /* The models trained here (scratch, full target, the retrain rows'
     * controls) use the source's parameters, as retraining does. */
    convsel_train_params tp = *convsel_model_params(source);
    tp.threads = o.threads;
    if (o.source_data) {
        char *copy = strdup(o.source_data), *save = NULL;
        source_sets = calloc(64 + 1, sizeof *source_sets);
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            convsel_dataset *d;
            if (n_source_sets == 64) {
                fprintf(stderr, "bench_transfer: --source-data: more than 64 files\n");
                return 2;
            }
            if ((st = convsel_dataset_load(tok, &d)) != CONVSEL_OK)
                die(tok, st);
            source_sets[n_source_sets++] = d;
        }
        free(copy);
    }

    /* cells[k][row] over the repeats: each repeat its own split (seed + r),
     * so the pool, the choice and the held-out part all vary. */
    struct cell cells[MAX_KS][ROW_COUNT];
    memset(cells, 0, sizeof cells);
    size_t pool_sizes = 0, test_records = 0;
    const convsel_fingerprint *cpu = convsel_dataset_fingerprint(target, 0);
    for (int rep = 0; rep < o.repeats; rep++) {
        uint64_t seed = o.seed + (uint64_t)rep;
        convsel_dataset *train, *test;
        if ((st = convsel_dataset_split(target, o.test_frac, seed, CONVSEL_SPLIT_BY_CONFIG, &train, &test)) !=
            CONVSEL_OK)
            die("split", st);
        struct pool pool;
        pool_build(train, source, &pool);
        pool_sizes += pool.n;
        test_records += convsel_dataset_size(test);
        fprintf(stderr, "bench_transfer: split %d: source %s, target %s (%s), pool %zu configurations, %zu test "
                        "records\n",
                rep, convsel_model_id(source), cpu ? cpu->model_name : "?",
                cpu ? convsel_isa_name(cpu->isa_cap) : "?", pool.n, convsel_dataset_size(test));

        struct cell source_cell = {0}, full_cell = {0}, retrain_none_cell = {0}, retrain_full_cell = {0};
        eval_source(source, test, &source_cell);
        {
            const convsel_dataset *sets[1] = {train};
            convsel_model *full;
            double t0 = now_s();
            tp.seed = seed;
            if ((st = convsel_model_train(sets, 1, &tp, NULL, NULL, &full)) != CONVSEL_OK)
                die("train full", st);
            eval_into(full, test, &full_cell, now_s() - t0);
            convsel_model_destroy(full);
        }
        if (source_sets) {
            /* The control: retraining alone, with this split's seed, moves
             * the model as much as the samples may. */
            convsel_model *again;
            double t0 = now_s();
            if ((st = convsel_model_train(source_sets, n_source_sets, &tp, NULL, NULL, &again)) != CONVSEL_OK)
                die("train source data", st);
            eval_into(again, test, &retrain_none_cell, now_s() - t0);
            convsel_model_destroy(again);
            convsel_model *both;
            source_sets[n_source_sets] = train;
            t0 = now_s();
            if ((st = convsel_model_train(source_sets, n_source_sets + 1, &tp, NULL, NULL, &both)) != CONVSEL_OK)
                die("train source data + full target", st);
            eval_into(both, test, &retrain_full_cell, now_s() - t0);
            convsel_model_destroy(both);
        }
        size_t *chosen = malloc((pool.n ? pool.n : 1) * sizeof *chosen);
        for (size_t ki = 0; ki < o.n_ks; ki++) {
            size_t k = o.ks[ki];
            if (k > pool.n) {
                fprintf(stderr, "bench_transfer: K=%zu skipped: the pool has %zu configurations\n", k, pool.n);
                continue;
            }
            struct cell *row = cells[ki];
            const struct cell *fixed[4] = {&source_cell, &full_cell, &retrain_none_cell, &retrain_full_cell};
            const int fixed_rows[4] = {ROW_SOURCE, ROW_FULL, ROW_RETRAIN_NONE, ROW_RETRAIN_FULL};
            for (int f = 0; f < (source_sets ? 4 : 2); f++) {
                struct cell *c = &row[fixed_rows[f]];
                c->spearman += fixed[f]->spearman, c->mape += fixed[f]->mape, c->top1 += fixed[f]->top1;
                c->spearman_pooled += fixed[f]->spearman_pooled;
                c->regret_mean += fixed[f]->regret_mean, c->regret_p95 += fixed[f]->regret_p95;
                c->regret[c->n] = fixed[f]->regret_mean;
                c->seconds += fixed[f]->seconds, c->n++;
            }
            if ((st = convsel_calibrate_choose(source, pool.cand, pool.n, k, seed, cpu, chosen)) != CONVSEL_OK)
                die("choose", st);
            convsel_dataset *samples = subset(train, &pool, chosen, k);
            const convsel_calibrate_method dm = default_method(samples);
            chose[CHOSE_DEFAULT][ki][dm]++;
            for (int m = 0; m < CONVSEL_CALIBRATE_METHOD_COUNT; m++) {
                double secs;
                convsel_model *cal = calibrate(source, samples, (convsel_calibrate_method)m, seed, &secs);
                if (!cal)
                    continue;
                eval_into(cal, test, &row[ROW_METHOD + m], secs);
                if (m == (int)dm)
                    eval_into(cal, test, &row[ROW_DEFAULT], secs);
                if (m == CONVSEL_CALIBRATE_RETRAIN) {
                    /* Stacked: the retrained model's per-primitive lines
                     * fitted on the samples it was retrained with. */
                    double secs2;
                    convsel_model *stacked = calibrate(cal, samples, CONVSEL_CALIBRATE_LINEAR, seed, &secs2);
                    eval_into(stacked, test, &row[ROW_RETRAIN_LINEAR], secs + secs2);
                    convsel_model_destroy(stacked);
                }
                if (m == CONVSEL_CALIBRATE_AUTO || m == CONVSEL_CALIBRATE_LINEAR_OR_BOTH) {
                    convsel_calibration_info info;
                    if (convsel_model_calibration(cal, 0, &info) == CONVSEL_OK)
                        chose[m == CONVSEL_CALIBRATE_AUTO ? CHOSE_AUTO : CHOSE_LOB][ki][info.method]++;
                }
                convsel_model_destroy(cal);
            }
            const convsel_dataset *sets[1] = {samples};
            convsel_model *scratch;
            double t0 = now_s();
            if ((st = convsel_model_train(sets, 1, &tp, NULL, NULL, &scratch)) != CONVSEL_OK)
                die("train scratch", st);
            eval_into(scratch, test, &row[ROW_SCRATCH], now_s() - t0);
            convsel_model_destroy(scratch);
            convsel_dataset_destroy(samples);

            /* The same K drawn uniformly at random (partial Fisher-Yates). */
            convsel_rng rng = {seed * 0x9e3779b97f4a7c15ull + 17};
            for (size_t i = 0; i < pool.n; i++)
                chosen[i] = i;
            for (size_t i = 0; i < k; i++) {
                size_t j = i + convsel_rng_below(&rng, pool.n - i);
                size_t t = chosen[i];
                chosen[i] = chosen[j];
                chosen[j] = t;
            }
            samples = subset(train, &pool, chosen, k);
            double secs;
            convsel_model *cal = calibrate(source, samples, default_method(samples), seed, &secs);
            eval_into(cal, test, &row[ROW_RANDOM], secs);
            convsel_model_destroy(cal);
            convsel_dataset_destroy(samples);
        }
        free(chosen);
        pool_free(&pool);
        convsel_dataset_destroy(train);
        convsel_dataset_destroy(test);
    }
    size_t n_done = 0;
    size_t done_ks[MAX_KS];
    struct cell done_cells[MAX_KS][ROW_COUNT];
    int done_chose[CHOSE_KINDS][MAX_KS][CONVSEL_CALIBRATE_METHOD_COUNT];
    for (size_t ki = 0; ki < o.n_ks; ki++)
        if (cells[ki][ROW_METHOD].n) {
            memcpy(done_cells[n_done], cells[ki], sizeof cells[ki]);
            for (int w = 0; w < CHOSE_KINDS; w++)
                memcpy(done_chose[w][n_done], chose[w][ki], sizeof chose[w][ki]);
            done_ks[n_done++] = o.ks[ki];
        }

    /* ------------------------------------------------------------ output */
    char path[4096];
    snprintf(path, sizeof path, "%s.csv", o.out_prefix);
    FILE *csv = fopen(path, "w");
    snprintf(path, sizeof path, "%s.md", o.out_prefix);
    FILE *md = fopen(path, "w");
    if (!csv || !md) {
        fprintf(stderr, "bench_transfer: cannot write %s.{md,csv}: %s\n", o.out_prefix, strerror(errno));
        return 1;
    }
    fprintf(csv, "k,model,spearman,spearman_pooled,mape,top1,regret_mean,regret_p95,regret_vs_source,"
                 "regret_vs_source_se,seconds\n");
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    const convsel_fingerprint *src_cpu = convsel_model_fingerprint(source, 0);
    fprintf(md, "# Few-shot transfer to a new CPU\n\n");
    fprintf(md, "Generated by `bench_transfer%s%s` on %s. Method: docs/transfer.md.\n\n",
            o.synthetic ? " --synthetic" : "", o.as_selector ? " --as-selector" : "", date);
    if (o.as_selector)
        fprintf(md, "- predictions priced as `convsel select` prices them: a oneDNN primitive that oneDNN would "
                    "run as its im2col + sgemm kernel on the target is predicted as `onednn_gemm`, and one that oneDNN "
                    "would run as its reference loops (`ref:any`) is left out of the configuration's ranking, as "
                    "the selector leaves it out. The kernel is the record's `kernel` column where the profiler wrote it, "
                    "else what oneDNN on this machine would run under the record's ISA cap (files profiled before "
                    "the column existed). Over the splits' held-out records (%zu): %zu predicted as another kernel, "
                    "%zu left out as reference loops, %zu of unknown kernel (measured under another cap than this "
                    "run's, priced as themselves)\n",
                held_out_rows, priced_as_rows, unranked_rows, unknown_kernel_rows);
    if (o.calib_text)
        fprintf(md, "- calibration parameters other than the defaults: `--calib %s`\n", o.calib_text);
    if (o.source_data)
        fprintf(md, "- retrain (`convsel_model_retrain`): the source's training parameters on `%s` (the source's "
                    "data) plus the K samples, each given %d times, with the split's seed; \"alone\": the same data "
                    "without target samples (the source model's own seed is %llu: what retraining changes by "
                    "itself); \"+ full target\": plus the target's whole training part once\n",
                o.source_data, calib_params.retrain_copies,
                (unsigned long long)convsel_model_params(source)->seed);
    convsel_fingerprint here;
    if (!o.synthetic && convsel_fingerprint_get(&here) == CONVSEL_OK)
        fprintf(md, "- run on: %s (%s, %d cores, cap %s)\n", here.model_name, here.microarch, here.cores,
                convsel_isa_name(convsel_get_isa()));
    fprintf(md, "- source model: `%s`%s%s (trained on %s, cap %s)\n", convsel_model_id(source),
            o.synthetic ? "" : ", ", o.synthetic ? "" : o.source_path, src_cpu ? src_cpu->model_name : "?",
            src_cpu ? convsel_isa_name(src_cpu->isa_cap) : "?");
    fprintf(md, "- the models trained here (scratch on K, full target and the retrain rows) use the source's "
                "training parameters: %d trees at most, depth %d, learning rate %g, %d bag(s), each with the "
                "split's seed\n",
            tp.trees, tp.max_depth, tp.learning_rate, tp.bags);
    fprintf(md, "- target: %s%s (%s, cap %s); split by shape, %.0f%% held out: %zu training configurations "
                "(the pool, mean), %zu held-out records (mean)\n",
            o.synthetic ? "synthetic" : o.target_path, "", cpu ? cpu->model_name : "?",
            cpu ? convsel_isa_name(cpu->isa_cap) : "?", 100 * o.test_frac, pool_sizes / (size_t)o.repeats,
            test_records / (size_t)o.repeats);
    fprintf(md, "- every number is the mean over %d splits (seeds %llu..%llu); K configurations chosen by "
                "`convsel_calibrate_choose` (half by ranking uncertainty, half by coverage) unless marked random\n",
            o.repeats, (unsigned long long)o.seed, (unsigned long long)(o.seed + (uint64_t)o.repeats - 1));
    fprintf(md, "- metrics on the held-out configurations (convsel_metrics): Spearman and top-1 per "
                "configuration (the ranking of a configuration's primitives; onednn_auto, a dispatcher to "
                "the onednn_direct kernel, left out of it), Spearman pooled over all held-out records, MAPE "
                "per record, regret = time of the predicted-fastest / fastest - 1; \"regret − source's\": per split, "
                "the row's mean regret minus the unchanged source's on the same split, averaged (percentage points, "
                "± its standard error over the splits)\n\n");
    fprintf(md, "Targets: K=10 → Spearman ≥ 0.95 and top-1 ≥ 0.85; K=20 → regret_mean ≤ 3%%.\n\n");
    for (size_t i = 0; i < n_done; i++) {
        fprintf(md, "## K = %zu\n\n", done_ks[i]);
        fprintf(md, "| model | Spearman per config | Spearman pooled | MAPE | top-1 | regret mean | regret p95 | "
                    "regret − source's, paired (± s.e.) | fit s |\n");
        fprintf(md, "|---|---|---|---|---|---|---|---|---|\n");
        for (int r = 0; r < ROW_COUNT; r++) {
            if (!done_cells[i][r].n)
                continue;
            struct cell c = cell_mean(&done_cells[i][r]);
            double d, se;
            paired_regret(&done_cells[i][r], &done_cells[i][ROW_SOURCE], &d, &se);
            fprintf(md, "| %s | %.3f | %.3f | %.1f%% | %.3f | %.2f%% | %.1f%% | %+.2f ± %.2f | %.2f |\n", row_names[r],
                    c.spearman, c.spearman_pooled, 100 * c.mape, c.top1, 100 * c.regret_mean, 100 * c.regret_p95,
                    100 * d, 100 * se, c.seconds);
            fprintf(csv, "%zu,%s,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.3f\n", done_ks[i], row_names[r], c.spearman,
                    c.spearman_pooled, c.mape, c.top1, c.regret_mean, c.regret_p95, d, se, c.seconds);
        }
        for (int w = 0; w < CHOSE_KINDS; w++) {
            const int *counts = done_chose[w][i];
            fprintf(md, "%s", chose_what[w]);
            for (int m = 0; m < CONVSEL_CALIBRATE_METHOD_COUNT; m++)
                if (counts[m])
                    fprintf(md, " %s %d of %d;", convsel_calibrate_method_name((convsel_calibrate_method)m), counts[m],
                            o.repeats);
        }
        fprintf(md, "\n\n");
    }
    /* The targets, checked on the default method. */
    fprintf(md, "## Targets (the default method: %s)\n\n| K | target | got | met |\n|---|---|---|---|\n",
            source_sets ? "retrain or linear-or-both, by convsel_calibrate_default_method on each split's samples"
                        : convsel_calibrate_method_name(default_method(NULL)));
    for (size_t i = 0; i < n_done; i++) {
        struct cell c = cell_mean(&done_cells[i][ROW_DEFAULT]);
        if (done_ks[i] == 10) {
            fprintf(md, "| 10 | Spearman ≥ 0.95 (per configuration) | %.3f | %s |\n", c.spearman,
                    c.spearman >= 0.95 ? "yes" : "no");
            fprintf(md, "| 10 | Spearman ≥ 0.95 (pooled over records) | %.3f | %s |\n", c.spearman_pooled,
                    c.spearman_pooled >= 0.95 ? "yes" : "no");
            fprintf(md, "| 10 | top-1 ≥ 0.85 | %.3f | %s |\n", c.top1, c.top1 >= 0.85 ? "yes" : "no");
        }
        if (done_ks[i] == 20)
            fprintf(md, "| 20 | regret_mean ≤ 3%% | %.2f%% | %s |\n", 100 * c.regret_mean,
                    c.regret_mean <= 0.03 ? "yes" : "no");
    }
    if (n_done) {
        struct cell full = cell_mean(&done_cells[0][ROW_FULL]);
        fprintf(md, "\nFor scale: the model trained on the whole target training part reaches Spearman %.3f, "
                    "top-1 %.3f, regret %.2f%% on the same held-out configurations; measurement noise and "
                    "near-ties between primitives keep it below 1.\n",
                full.spearman, full.top1, 100 * full.regret_mean);
    }
    fclose(csv);
    fclose(md);
    printf("wrote %s.md and %s.csv\n", o.out_prefix, o.out_prefix);
    if (o.as_selector && unknown_kernel_rows)
        fprintf(stderr,
                "bench_transfer: warning: %zu of %zu held-out records have no kernel recorded and another ISA cap "
                "than this run's (%s): they were priced as themselves; run under the target's cap "
                "(CONVSEL_ISA)\n",
                unknown_kernel_rows, held_out_rows, convsel_isa_name(convsel_get_isa()));
    for (size_t i = 0; i < n_done; i++)
        for (int r = 0; r < ROW_COUNT; r++) {
            if (!done_cells[i][r].n)
                continue;
            struct cell c = cell_mean(&done_cells[i][r]);
            printf("K=%-4zu %-20s spearman %.3f  mape %5.1f%%  top1 %.3f  regret %5.2f%%  p95 %5.1f%%\n", done_ks[i],
                   row_names[r], c.spearman, 100 * c.mape, c.top1, 100 * c.regret_mean, 100 * c.regret_p95);
        }
    for (size_t i = 0; i < n_source_sets; i++)
        convsel_dataset_destroy((convsel_dataset *)source_sets[i]);
    free(source_sets);
    convsel_dataset_destroy(target);
    convsel_model_destroy(source);
    return 0;
}
